/**
 * Pacing of a hub's broker work. A bound on catch-up replays running at once (each is a short-lived broker consumer): a resume
 * storm after a restart queues here instead of opening thousands of consumers together.
 */

/** @internal */
export class Limiter {
  readonly #max: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  /** Resolves with a release function once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.#running >= this.#max) await new Promise<void>((r) => this.#waiting.push(r));
    else this.#running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter: #running stays the same.
      if (next) next();
      else this.#running--;
    };
  }
}
