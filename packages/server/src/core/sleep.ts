/** @internal Resolves after `ms` (a retry's back-off). No `node:timers` import: core runs on the edge too. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms));
