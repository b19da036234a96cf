/**
 * @internal Hands out the events of a source that yields them a batch at a time (a read's
 * consumer pass or direct get), one per `next()`. An event already in hand is a resolved
 * promise: an async generator's `yield` per event cost a suspended frame and three microtask
 * turns, the largest per-event cost of a replay that raw nats.js does not have
 * (docs/benchmarks/profiles/core.md). The source runs only when a batch is used up.
 *
 * It keeps an async generator's contract: calls made while one is waiting are answered in
 * order; an error ends the iteration after the events before it; `return()` (a `break`) ends
 * the source, which releases its consumer; a `signal` aborted between two events ends the
 * iteration at the next call, as the generator's check after each `yield` did.
 */
const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true }) as IteratorReturnResult<undefined>;

export class BatchedEvents<T> implements AsyncIterableIterator<T, undefined> {
  readonly #source: AsyncGenerator<readonly T[], unknown>;
  readonly #signal: AbortSignal | undefined;
  #batch: readonly T[] = [];
  #at = 0;
  #done = false;
  /** The call waiting for the source; later calls wait behind it. */
  #waiting: Promise<IteratorResult<T, undefined>> | undefined;

  constructor(source: AsyncGenerator<readonly T[], unknown>, signal?: AbortSignal) {
    this.#source = source;
    this.#signal = signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.#waiting !== undefined) {
      const again = () => this.next();
      return this.#waiting.then(again, again);
    }
    if (this.#done) return Promise.resolve(DONE);
    if (this.#signal?.aborted) return this.return();
    if (this.#at < this.#batch.length) return Promise.resolve({ value: this.#batch[this.#at++]!, done: false });
    const waiting = this.#fill();
    this.#waiting = waiting;
    return waiting;
  }

  async return(): Promise<IteratorResult<T, undefined>> {
    this.#done = true;
    this.#batch = [];
    await this.#source.return(undefined);
    return DONE;
  }

  async #fill(): Promise<IteratorResult<T, undefined>> {
    try {
      for (;;) {
        const step = await this.#source.next();
        if (step.done) {
          this.#done = true;
          return DONE;
        }
        if (step.value.length === 0) continue;
        this.#batch = step.value;
        this.#at = 1;
        return { value: step.value[0]!, done: false };
      }
    } catch (err) {
      this.#done = true;
      this.#batch = [];
      throw err;
    } finally {
      this.#waiting = undefined;
    }
  }
}
