/**
 * When `tidemark serve` must stop: on SIGTERM or SIGINT, and — when npm started it (`npx`,
 * `npm start`) — when the shell npm started it under goes away. npm answers SIGTERM by killing
 * that shell and exiting at once, which would leave this process running with the port and
 * the embedded broker; it notices its new parent and drains as on SIGTERM.
 */

export interface ShutdownOptions {
  /** Lifecycle lines: the reason of the shutdown, and signals that arrive during it. */
  log: (msg: string, fields: Record<string, unknown>) => void;
  /**
   * Stop when the parent process exits.
   * @default true when npm started the process (npm_command or npm_lifecycle_event is set)
   */
  watchParent?: boolean;
  /** How often the parent is checked. @default 500 */
  parentPollMs?: number;
}

/** Whether npm (or a package manager that sets npm's variables) started this process. */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return env.npm_command !== undefined || env.npm_lifecycle_event !== undefined;
}

/**
 * Resolves with the reason (`SIGTERM`, `SIGINT`, `parent-exited`) at the first request to stop.
 * Later signals are logged and ignored: the drain is bounded on its own, and a group signal
 * can reach this process twice (directly and forwarded by a wrapper). SIGKILL still ends it.
 */
export function shutdownRequested(options: ShutdownOptions): Promise<string> {
  const { log, watchParent = startedByNpm(process.env), parentPollMs = 500 } = options;
  return new Promise((resolve) => {
    const parent = process.ppid;
    const poll = setInterval(() => {
      if (process.ppid !== parent) request("parent-exited");
    }, parentPollMs);
    poll.unref();
    if (!watchParent) clearInterval(poll);
    let reason: string | undefined;
    const request = (why: string) => {
      if (reason !== undefined) {
        log("already shutting down", { signal: why, reason });
        return;
      }
      reason = why;
      clearInterval(poll);
      log("shutting down", why.startsWith("SIG") ? { signal: why } : { reason: why });
      resolve(why);
    };
    process.on("SIGTERM", () => request("SIGTERM"));
    process.on("SIGINT", () => request("SIGINT"));
  });
}
