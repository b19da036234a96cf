/**
 * The hub's window of recent events: a circular buffer bounded by count and bytes. It holds
 * every event of its (topic, tenant) with a stream sequence in `(floor, last]`, so a reader
 * whose position is at or past `floor` is served from memory instead of a replay consumer.
 */
import type { TidemarkEvent } from "@tidemark/shared";

/** @internal */
export class Ring<T = unknown> {
  /** Every event with a sequence above `floor` (up to the newest pushed) is in the ring. */
  floor: number;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #events: (TidemarkEvent<T> | undefined)[];
  readonly #sizes: number[];
  /** Absolute index of the oldest event held. */
  #start = 0;
  #length = 0;
  #bytes = 0;

  constructor(floor: number, maxEvents: number, maxBytes: number) {
    this.floor = floor;
    this.#maxEvents = Math.max(1, maxEvents);
    this.#maxBytes = maxBytes;
    // Grown on demand: a quiet tenant's hub holds a few events, not maxEvents empty slots.
    this.#events = [];
    this.#sizes = [];
  }

  /** Absolute index of the oldest event held. */
  get start(): number {
    return this.#start;
  }
  /** Absolute index one past the newest event. */
  get end(): number {
    return this.#start + this.#length;
  }
  get length(): number {
    return this.#length;
  }
  get bytes(): number {
    return this.#bytes;
  }

  /** Appends an event, evicting the oldest ones (and raising `floor`) to stay in bounds. */
  push(event: TidemarkEvent<T>, size: number): void {
    while (this.#length > 0 && (this.#length >= this.#maxEvents || this.#bytes + size > this.#maxBytes)) {
      this.#evict();
    }
    const slot = (this.#start + this.#length) % this.#maxEvents;
    this.#events[slot] = event;
    this.#sizes[slot] = size;
    this.#length++;
    this.#bytes += size;
  }

  /** The event at an absolute index, if still held. */
  at(index: number): TidemarkEvent<T> | undefined {
    if (index < this.#start || index >= this.end) return undefined;
    return this.#events[index % this.#maxEvents];
  }

  /** Absolute index of the first held event with a sequence above `sequence` (`end` if none). */
  indexAfter(sequence: number): number {
    let lo = this.#start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid)!.streamSequence <= sequence) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops everything and moves `floor` (used when the follower restarts further on). */
  reset(floor: number): void {
    while (this.#length > 0) this.#evict();
    this.floor = floor;
  }

  #evict(): void {
    const slot = this.#start % this.#maxEvents;
    const event = this.#events[slot]!;
    this.#events[slot] = undefined;
    this.#bytes -= this.#sizes[slot]!;
    this.#start++;
    this.#length--;
    if (event.streamSequence > this.floor) this.floor = event.streamSequence;
  }
}
