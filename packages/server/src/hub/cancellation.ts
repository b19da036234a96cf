/**
 * `Cancellation`: the one-shot cancel flag of a hub subscription. A file of its own so that the
 * hub's contract (contract.ts) and its users can name it without importing the registry.
 */

/** A one-shot cancel flag with the part of AbortSignal a hub subscription needs. */
export class Cancellation {
  aborted = false;
  #follower: { poke(): void } | undefined;
  #controller: AbortController | undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#follower?.poke();
    this.#controller?.abort();
  }

  /** @internal */
  watch(follower: { poke(): void } | undefined): void {
    this.#follower = follower;
  }

  /** A real AbortSignal tied to this cancellation, made on first use (for replays). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }
}
