/**
 * The engine's copy of one feed: bounded history, the cursor to resume from, and the rules that
 * keep it free of duplicates (by stream sequence within an incarnation). Pure: no I/O.
 */
import { cursorWithPrefix, decodeCursor, type ResetReason, type TidemarkEvent } from "@tidemark/shared";
import type { FeedItem } from "./types.js";
import { ReadLog, type SavedRead } from "./read-log.js";

/** What is saved per feed. */
export interface SavedFeed {
  key: string;
  /** Last cursor seen: an event's, or the head after a reset. */
  cursor?: string;
  /** Largest `n` handed out. */
  lastN: number;
  items: FeedItem[];
  /** The principal's read state of the feed, and reads not confirmed by the server yet. */
  read?: SavedRead;
}

interface Position {
  incarnation: string;
  sequence: number;
}

/**
 * The last cursor prefix decoded and its incarnation. A feed's cursors share their prefix and
 * differ in the sequence: decoding the prefix (base64 and JSON) for each event was a tenth of the
 * engine's time in a burst.
 */
let known: { prefix: string; incarnation: string } | undefined;

function position(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  const prefix = cursor.slice(0, cursor.lastIndexOf(".") + 1);
  if (known !== undefined && prefix === known.prefix) {
    const sequence = Number.parseInt(cursor.slice(prefix.length), 36);
    // Only a canonical sequence re-encodes to the same cursor; anything else is decoded in full.
    if (Number.isSafeInteger(sequence) && sequence >= 0 && cursorWithPrefix(prefix, sequence) === cursor) {
      return { incarnation: known.incarnation, sequence };
    }
  }
  try {
    const { incarnation, sequence } = decodeCursor(cursor);
    known = { prefix, incarnation };
    return { incarnation, sequence };
  } catch {
    return undefined;
  }
}

/** One feed's history and position. */
export class FeedLog {
  readonly key: string;
  items: FeedItem[];
  lastN: number;
  cursor: string | undefined;
  /** The read state (see read-log.ts). */
  readonly read: ReadLog;
  private position: Position | undefined;

  constructor(
    saved: SavedFeed,
    private readonly limit: number,
  ) {
    this.key = saved.key;
    this.items = saved.items.slice(-limit);
    this.lastN = saved.lastN;
    this.cursor = saved.cursor;
    this.position = position(saved.cursor);
    this.read = new ReadLog(saved.read);
  }

  /** Adds an event unless it was already seen; returns the new item or undefined. */
  addEvent(event: TidemarkEvent): FeedItem | undefined {
    const at = position(event.cursor);
    const last = this.position;
    // Same incarnation: sequences only grow. Another incarnation (a re-created topic after a
    // reset) starts its own numbering, so it is accepted.
    if (at && last && (at.incarnation === last.incarnation || last.incarnation === "") && at.sequence <= last.sequence) {
      return undefined;
    }
    if (!at && this.items.some((i) => i.kind === "event" && i.event.eventId === event.eventId)) return undefined;
    const item: FeedItem = { kind: "event", n: ++this.lastN, event };
    this.push(item);
    this.cursor = event.cursor;
    this.position = at;
    return item;
  }

  /** The server restarted the feed at `head`: keep history, mark the gap, continue from there. */
  addGap(reason: ResetReason, head: string, message: string, now = Date.now()): FeedItem {
    const item: FeedItem = { kind: "gap", n: ++this.lastN, reason, message, at: now };
    // Two gaps in a row say nothing more than one.
    if (this.items.at(-1)?.kind === "gap") this.items.pop();
    this.push(item);
    this.cursor = head;
    this.position = position(head);
    return item;
  }

  /** The server says every event up to `cursor` was delivered: resume after it next time. */
  addWatermark(cursor: string): void {
    const at = position(cursor);
    const last = this.position;
    if (!at) return;
    if (last && (at.incarnation === last.incarnation || at.incarnation === "") && at.sequence <= last.sequence) return;
    this.cursor = cursor;
    this.position = at;
  }

  save(): SavedFeed {
    return { key: this.key, cursor: this.cursor, lastN: this.lastN, items: this.items.slice(), read: this.read.save() };
  }

  private push(item: FeedItem): void {
    this.items.push(item);
    if (this.items.length > this.limit) this.items.splice(0, this.items.length - this.limit);
  }
}

/**
 * A tab's view of a feed: takes snapshots and pushed items (possibly repeated after the engine
 * restarted or the leader changed) and lets each one through once, in order.
 */
export class TabView<T = unknown> {
  private lastN = 0;
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];

  constructor(private readonly seenLimit = 10_000) {}

  /** Items not delivered before, in `n` order. */
  accept(items: readonly FeedItem[]): FeedItem<T>[] {
    const fresh: FeedItem<T>[] = [];
    for (const item of [...items].sort((a, b) => a.n - b.n)) {
      if (item.kind === "event") {
        if (this.seen.has(item.event.eventId)) continue;
        this.remember(item.event.eventId);
      } else if (item.n <= this.lastN) {
        continue;
      }
      this.lastN = Math.max(this.lastN, item.n);
      fresh.push(item as FeedItem<T>);
    }
    return fresh;
  }

  private remember(id: string): void {
    this.seen.add(id);
    this.seenOrder.push(id);
    if (this.seenOrder.length > this.seenLimit) this.seen.delete(this.seenOrder.shift()!);
  }
}

/** True when a stored value has the shape of a {@link SavedFeed}. */
export function isSavedFeed(value: unknown): value is SavedFeed {
  const v = value as SavedFeed | null | undefined;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.key === "string" &&
    Number.isSafeInteger(v.lastN) &&
    (v.cursor === undefined || typeof v.cursor === "string") &&
    Array.isArray(v.items) &&
    v.items.every((i) => typeof i === "object" && i !== null && typeof i.n === "number" && (i.kind === "event" ? typeof i.event?.eventId === "string" : i.kind === "gap"))
  );
}

/** The engine's key of a feed. */
export function feedKey(mode: "hub" | "live", topic: string, tenantId: string | undefined): string {
  return JSON.stringify([mode, topic, tenantId ?? null]);
}

/**
 * Key of a feed's saved record: the principal the server named (`welcome.principal`) and the
 * feed. One user's history is never read for another.
 */
export function historyKey(principal: string, key: string): string {
  return JSON.stringify([principal, key]);
}
