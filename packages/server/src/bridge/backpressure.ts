/**
 * @internal Watches connections paused by backpressure: one 20 ms poller per bridge, running
 * only while some connection is paused (a socket gives no "drained" event on every runtime).
 */
export interface Pausable {
  /** True once the connection is no longer paused (its buffer drained, or it closed). */
  checkDrained(): boolean;
}

export class BackpressurePoller {
  readonly #paused = new Set<Pausable>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Polls `connection` until it drains. */
  watch(connection: Pausable): void {
    this.#paused.add(connection);
    this.#timer ??= setInterval(() => this.#poll(), 20);
  }

  #poll(): void {
    for (const c of this.#paused) if (c.checkDrained()) this.#paused.delete(c);
    if (this.#paused.size === 0) this.stop();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
