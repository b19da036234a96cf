/**
 * @internal Turns a pushed message iterator into batches: the reader takes everything that
 * arrived since its last turn, so per-batch work (the tenant gap check) is amortised under load.
 * The pump stops pulling at `highWater` so a slow reader never buffers without bound.
 */
export class BatchPump<T> {
  #buffer: T[] = [];
  #error: unknown;
  #done = false;
  #wakeReader: (() => void) | undefined;
  #wakePump: (() => void) | undefined;

  constructor(source: AsyncIterable<T>, readonly highWater = 1024) {
    void this.#run(source);
  }

  async #run(source: AsyncIterable<T>): Promise<void> {
    try {
      for await (const item of source) {
        this.#buffer.push(item);
        this.#wakeReader?.();
        while (this.#buffer.length >= this.highWater) {
          await new Promise<void>((r) => (this.#wakePump = r));
        }
      }
    } catch (err) {
      this.#error = err;
    } finally {
      this.#done = true;
      this.#wakeReader?.();
    }
  }

  /** Waits for at least one item and returns all buffered items; `undefined` at the end. */
  async next(): Promise<T[] | undefined> {
    while (this.#buffer.length === 0) {
      if (this.#error !== undefined) throw this.#error;
      if (this.#done) return undefined;
      await new Promise<void>((r) => (this.#wakeReader = r));
      this.#wakeReader = undefined;
    }
    const batch = this.#buffer;
    this.#buffer = [];
    this.#wakePump?.();
    this.#wakePump = undefined;
    return batch;
  }
}
