/**
 * Reference model of the cursor contract (DESIGN.md §3 and the seed document), in plain
 * TypeScript: every published event (incarnation, sequence, tenant, key, receipt), the retained
 * window observed from the broker after each command, and what a reader resuming from a saved
 * position must see. The window is an input (retention by bytes is the broker's business); the
 * readers' outputs are what the suite checks against the model's prediction.
 */

/** A position the model understands: the incarnation (model counter) and a stream sequence. */
export interface Position {
  /** The real cursor string, as the system handed it out. */
  cursor: string;
  /** Model incarnation: 0 for the first stream, +1 per destroy and re-create; -1: not a cursor. */
  k: number;
  seq: number;
}

export interface ModelReceipt {
  eventId: string;
  cursor: string;
  streamSequence: number;
}

export interface ModelEvent {
  k: number;
  seq: number;
  tenant: string | undefined;
  key: string | undefined;
  receipt: ModelReceipt;
}

/** What a resume from a saved position must produce. */
export type Expectation =
  | { kind: "events"; events: ModelEvent[] }
  | { kind: "gap" }
  | { kind: "mismatch" }
  | { kind: "invalid" };

/** The retained window as stream info reports it: `first` = last + 1 when nothing is retained. */
export interface Window {
  first: number;
  last: number;
}

export class CursorModel {
  /** Current incarnation of the topic. */
  k = 0;
  readonly events: ModelEvent[] = [];
  window: Window = { first: 0, last: 0 };
  /** Tenant-scoped idempotency keys of the current incarnation: (tenant, key) -> original. */
  readonly #keys = new Map<string, ModelEvent>();

  /** Sequence of the newest event of the current incarnation (0 before any). */
  get last(): number {
    return this.current().at(-1)?.seq ?? 0;
  }

  current(): ModelEvent[] {
    return this.events.filter((e) => e.k === this.k);
  }

  /** The original event when `key` was already used by `tenant` in this incarnation. */
  duplicateOf(tenant: string | undefined, key: string | undefined): ModelEvent | undefined {
    return key === undefined ? undefined : this.#keys.get(keyOf(tenant, key));
  }

  /** Records a stored event; its sequence must be the next one. */
  stored(tenant: string | undefined, key: string | undefined, receipt: ModelReceipt): ModelEvent {
    const event: ModelEvent = { k: this.k, seq: receipt.streamSequence, tenant, key, receipt };
    this.events.push(event);
    if (key !== undefined) this.#keys.set(keyOf(tenant, key), event);
    return event;
  }

  /** Destroy and re-create: a new incarnation, an empty stream, no keys. */
  recreated(): void {
    this.k++;
    this.#keys.clear();
    this.window = { first: 0, last: 0 };
  }

  /**
   * Events a reader of `tenant` sees in the current incarnation after `seq` (all of them,
   * retained or not); `tenant` undefined reads the whole topic.
   */
  tenantEventsAfter(tenant: string | undefined, seq: number, until = Infinity): ModelEvent[] {
    return this.current().filter((e) => sees(tenant, e) && e.seq > seq && e.seq <= until);
  }

  /**
   * What resuming from `from` must give: a mismatch for another incarnation, invalid past the
   * head, a gap when the window no longer starts right after the position (every removal
   * counts, whoever's events they were), else exactly the tenant's events after it, in order.
   */
  expect(from: Position, tenant: string | undefined, until = Infinity): Expectation {
    if (from.k < 0) return { kind: "invalid" };
    if (from.k !== this.k) return { kind: "mismatch" };
    // Past the head: a cursor the topic never issued (a minted one). Refused on every path, also
    // for an empty range; once the topic reaches that sequence it is an ordinary position.
    if (from.seq > this.last) return { kind: "invalid" };
    // replay({ after, until }) with until <= after: an empty range, nothing to miss.
    if (until <= from.seq) return { kind: "events", events: [] };
    if (this.window.first > from.seq + 1) return { kind: "gap" };
    return { kind: "events", events: this.tenantEventsAfter(tenant, from.seq, until) };
  }

  /** True when a reader at `seq` of the current incarnation could resume without a gap. */
  resumable(seq: number): boolean {
    return this.window.first <= seq + 1;
  }

  /** Newest retained event of the tenant in this incarnation (what `latestCursor` names). */
  latestRetained(tenant: string | undefined): ModelEvent | undefined {
    return this.current().filter((e) => sees(tenant, e) && e.seq >= this.window.first).at(-1);
  }
}

/** A tenant reader sees its tenant's events; a reader without tenant sees the whole topic. */
export function sees(tenant: string | undefined, e: ModelEvent): boolean {
  return tenant === undefined || e.tenant === tenant;
}

function keyOf(tenant: string | undefined, key: string): string {
  return JSON.stringify([tenant ?? null, key]);
}

/** Short description of an expectation for failure messages. */
export function describeExpectation(e: Expectation): string {
  return e.kind === "events" ? `events [${e.events.map((x) => x.seq).join(",")}]` : e.kind;
}
