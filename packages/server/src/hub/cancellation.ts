/**
 * `Cancellation`: the one-shot cancel flag of a hub subscription. A file of its own so that the
 * hub's contract (contract.ts) and its users can name it without importing the registry.
 */

/** What a cancellation reaches of the follower its iteration waits on or handed its sink to. */
interface Watched {
  poke(): void;
  detach(sink: object): void;
}

/** A one-shot cancel flag with the part of AbortSignal a hub subscription needs. */
export class Cancellation {
  aborted = false;
  #follower: Watched | undefined;
  /** The sink its iteration handed to the follower's live fan-out (see `handOff`). */
  #sink: object | undefined;
  #controller: AbortController | undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    if (this.#sink) this.#follower?.detach(this.#sink);
    else this.#follower?.poke();
    this.#controller?.abort();
  }

  /** @internal The follower its iteration waits on: an abort wakes it. */
  watch(follower: Watched | undefined): void {
    this.#follower = follower;
    this.#sink = undefined;
  }

  /**
   * @internal Its iteration handed `sink` to the follower's live fan-out: an abort takes it out.
   * Two fields, not a closure: one per subscription of the bridge.
   */
  handOff(follower: Watched, sink: object): void {
    this.#follower = follower;
    this.#sink = sink;
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
