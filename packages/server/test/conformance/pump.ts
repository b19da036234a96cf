/** Drains an async iterable in the background so a test can wait on what it delivered so far. */
import type { TidemarkEvent } from "../../src/index.js";

export class Pump<T = unknown> {
  readonly events: TidemarkEvent<T>[] = [];
  error: (Error & { code?: string }) | undefined;
  done = false;
  readonly #controller = new AbortController();
  readonly #finished: Promise<void>;

  /** `open(signal)` starts the iteration (e.g. `(signal) => topic.follow({ after, signal })`). */
  constructor(open: (signal: AbortSignal) => AsyncIterable<TidemarkEvent<T>>) {
    this.#finished = (async () => {
      try {
        for await (const event of open(this.#controller.signal)) this.events.push(event);
      } catch (err) {
        this.error = err as Error & { code?: string };
      } finally {
        this.done = true;
      }
    })();
  }

  /** Waits until `check()` holds or the iteration ended; false on timeout. */
  async until(check: () => boolean, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!check() && !this.done) {
      if (Date.now() > end) return false;
      await sleep(20);
    }
    return true;
  }

  /** Waits for `n` events (or the end), then `quietMs` more for anything unexpected. */
  async settle(n: number, timeoutMs: number, quietMs: number): Promise<void> {
    await this.until(() => this.events.length >= n || this.error !== undefined, timeoutMs);
    if (!this.done) await sleep(quietMs);
  }

  /** Aborts the iteration and waits for it to end (bounded). */
  async stop(): Promise<void> {
    this.#controller.abort();
    await Promise.race([this.#finished, sleep(5_000)]);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
