/**
 * A topic feed's recent whole-topic events, indexed by tenant (hub mode "topic"). It holds every
 * event with a stream sequence in `(floor, top]`, so a follower resuming at or above `floor` gets
 * its tenant's events from memory instead of a replay consumer of its own: after a bridge
 * restart, a storm of resuming tenants costs one whole-topic read, not one replay each.
 * Bounded by sequence distance from the newest event and by bytes; the oldest go first.
 */
import type { TidemarkEvent } from "@tidemark/shared";

/** @internal */
export class Backlog<T = unknown> {
  /** Every event with a sequence in `(floor, top]` is held. */
  floor: number;
  top: number;
  /** Held events from `#head` on; the slots before it are emptied (compacted now and then). */
  #all: (TidemarkEvent<T> | undefined)[] = [];
  /** The size of `#all[i]` is `#sizes[i]`: a parallel array, not a WeakMap (a set per event, and work for every GC). */
  #sizes: number[] = [];
  /** The byte bound dropped events: anything put in front now would be dropped at once. */
  full = false;
  readonly #byTenant = new Map<string | undefined, TidemarkEvent<T>[]>();
  #bytes = 0;
  #head = 0;

  constructor(
    sequence: number,
    readonly maxSequences: number,
    readonly maxBytes: number,
    readonly sizeOf: (event: TidemarkEvent<T>) => number,
  ) {
    this.floor = sequence;
    this.top = sequence;
  }

  /** Appends the next event the feed read (above `top`). */
  push(event: TidemarkEvent<T>): void {
    this.#sizes.push(this.#add(event));
    this.#all.push(event);
    this.#tenant(event.tenantId).push(event);
    this.top = event.streamSequence;
    this.#trim();
  }

  /** Adds events of `(from, floor]` (in order) in front: the backlog now starts at `from`. */
  prepend(events: TidemarkEvent<T>[], from: number): void {
    const byTenant = new Map<string | undefined, TidemarkEvent<T>[]>();
    const sizes: number[] = [];
    for (const e of events) {
      sizes.push(this.#add(e));
      let list = byTenant.get(e.tenantId);
      if (!list) byTenant.set(e.tenantId, (list = []));
      list.push(e);
    }
    for (const [tenant, list] of byTenant) this.#byTenant.set(tenant, list.concat(this.#tenant(tenant)));
    // Not splice(0, n, ...events): a spread of 100,000 arguments overflows the stack.
    this.#all = (events as (TidemarkEvent<T> | undefined)[]).concat(this.#all.slice(this.#head));
    this.#sizes = sizes.concat(this.#sizes.slice(this.#head));
    this.#head = 0;
    this.floor = from;
    this.#trim();
  }

  /** Sequences before `first` were removed unread: the backlog restarts empty at `first - 1`. */
  jump(first: number): void {
    this.#all.length = 0;
    this.#sizes.length = 0;
    this.#head = 0;
    this.#byTenant.clear();
    this.#bytes = 0;
    this.full = false;
    this.floor = this.top = first - 1;
  }

  /**
   * Events of `tenant` (every event when undefined) in `(after, until]`, or undefined when some
   * of them may be missing (`after` below the floor).
   */
  slice(tenant: string | undefined, after: number, until: number): TidemarkEvent<T>[] | undefined {
    if (after < this.floor || until > this.top) return undefined;
    const list = tenant === undefined ? this.#all : (this.#byTenant.get(tenant) ?? []);
    const first = tenant === undefined ? this.#head : 0;
    const out: TidemarkEvent<T>[] = [];
    // The newest are at the end: a resume a little behind the head walks a short tail.
    let i = list.length;
    while (i > first && list[i - 1]!.streamSequence > after) i--;
    for (; i < list.length && list[i]!.streamSequence <= until; i++) out.push(list[i]!);
    return out;
  }

  #tenant(tenant: string | undefined): TidemarkEvent<T>[] {
    let list = this.#byTenant.get(tenant);
    if (!list) this.#byTenant.set(tenant, (list = []));
    return list;
  }

  /** Counts the event's size in, and returns it. */
  #add(event: TidemarkEvent<T>): number {
    const size = this.sizeOf(event);
    this.#bytes += size;
    return size;
  }

  #trim(): void {
    while (this.#head < this.#all.length) {
      const oldest = this.#all[this.#head]!;
      const overBytes = this.#bytes > this.maxBytes;
      if (oldest.streamSequence > this.top - this.maxSequences && !overBytes) break;
      if (overBytes) this.full = true;
      // Emptied now, not at the next compaction: up to 1,024 dropped events would stay alive.
      this.#all[this.#head] = undefined;
      this.#bytes -= this.#sizes[this.#head++]!;
      const list = this.#byTenant.get(oldest.tenantId);
      if (list?.[0] === oldest) list.shift();
      if (list?.length === 0) this.#byTenant.delete(oldest.tenantId);
      this.floor = oldest.streamSequence;
    }
    // Compact now and then: dropped entries stay in the array until then.
    if (this.#head > 1024 && this.#head * 2 > this.#all.length) {
      this.#all.splice(0, this.#head);
      this.#sizes.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
