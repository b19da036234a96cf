/**
 * @internal The messages of a `consume()`, a delivered batch at a time: everything that arrived
 * since the reader's last turn, in order. nats.js 3 queues pushed messages in an array and hands
 * them out from an async generator, one step (a suspended frame, three microtask turns) per
 * message; reading them by the batch through that generator cost a read that step on top of its
 * own hand-out, the largest per-event cost a replay had over raw nats.js
 * (docs/benchmarks/profiles/core.md). So the queue is taken whole, as the generator takes it.
 *
 * The generator's rules are kept: the flow-control answers and the stop marker queued among the
 * messages run when the reader takes their batch (so the server still sends no more than its
 * flow-control window past what the reader has taken); an error ends the batches after the
 * messages before it. `close()` does what the generator's `finally` does on a `break`. Any
 * other iterator (another nats.js shape) is read through `BatchPump`.
 */
import { deferred } from "@nats-io/nats-core";
import { BatchPump } from "./batch-pump.js";

/** nats.js 3's QueuedIteratorImpl fields that its `iterate()` uses. */
interface Queue<T> {
  yields: (T | (() => void))[];
  signal: Promise<void> & { resolve(): void };
  err?: unknown;
  done: boolean;
  yielding: boolean;
  noIterator: boolean;
  didBreak: boolean;
  processed: number;
  inflight: number;
  pendingFiltered: number;
  stop(err?: Error): void;
}

function asQueue<T>(source: object): Queue<T> | undefined {
  const q = source as Partial<Queue<T>>;
  const ok =
    Array.isArray(q.yields) &&
    typeof q.signal?.then === "function" &&
    typeof q.signal.resolve === "function" &&
    typeof q.done === "boolean" &&
    q.yielding === false &&
    q.noIterator === false &&
    typeof q.didBreak === "boolean" &&
    typeof q.processed === "number" &&
    typeof q.inflight === "number" &&
    typeof q.pendingFiltered === "number" &&
    typeof q.stop === "function";
  return ok ? (q as Queue<T>) : undefined;
}

export class MessageBatches<T> {
  readonly #queue: Queue<T> | undefined;
  readonly #pump: BatchPump<T> | undefined;
  readonly #stop: () => void;
  #ended = false;

  constructor(source: AsyncIterable<T> & { stop?(): void }) {
    this.#stop = () => source.stop?.();
    this.#queue = asQueue<T>(source);
    // Claimed as the generator claims it: a second reader fails instead of splitting the queue.
    if (this.#queue) this.#queue.yielding = true;
    else this.#pump = new BatchPump<T>(source);
  }

  /** Waits for at least one message and returns every queued one; `undefined` at the end. */
  async next(): Promise<T[] | undefined> {
    const q = this.#queue;
    if (q === undefined) return this.#pump!.next();
    for (;;) {
      if (this.#ended) return undefined;
      if (q.yields.length === 0) await q.signal;
      if (q.err !== undefined) {
        this.#end();
        throw q.err;
      }
      const yields = q.yields;
      q.yields = [];
      q.inflight = 0;
      const batch: T[] = [];
      for (let i = 0; i < yields.length; i++) {
        const y = yields[i]!;
        if (typeof y === "function") {
          q.pendingFiltered--;
          (y as () => void)();
          // Thrown at the next call, after the messages before it (the generator's order).
          if (q.err !== undefined) break;
          continue;
        }
        q.processed++;
        batch.push(y);
      }
      // Nothing queued meanwhile: wait on a fresh signal (the generator's reset). Once done, the
      // signal stays resolved and the next call ends.
      if (!q.done && q.yields.length === 0) q.signal = deferred<void>() as Queue<T>["signal"];
      if (batch.length > 0) return batch;
      if (q.done) {
        this.#end();
        if (q.err !== undefined) throw q.err;
        return undefined;
      }
    }
  }

  /** The reader is done: stop the messages; a stop marker queued later runs at once (nats.js's break). */
  close(): void {
    this.#end();
    this.#stop();
  }

  #end(): void {
    this.#ended = true;
    if (this.#queue) this.#queue.didBreak = true;
  }
}
