/**
 * A feed's read state in the engine: what the server last told (`read_state`, the highest version
 * wins) and the reads made here that the server has not confirmed yet (made offline, or in
 * flight). Both are saved with the feed's history (per principal), so a read made offline survives
 * a closed tab and is sent on the next start; the server's cursor wins when it is further on.
 * Pure: no I/O.
 */
import type { ReadStateWire } from "@tidemark/shared";

/** The read state a tab applies: every event up to `cursor` is read, and the events in `items`. */
export interface ReadView {
  cursor?: string;
  /** Event ids read one by one above `cursor`. */
  items: string[];
}

/** What is saved of it. */
export interface SavedRead {
  server?: ReadStateWire;
  pending: { cursor?: string; items: { id: string; cursor: string }[] };
}

/** One write the server should get: a cursor, or one item (its cursor). */
export type ReadWrite = { cursor: string } | { item: string };

/** The prefix (topic and incarnation) and the sequence of a cursor; undefined when it is not one. */
function split(cursor: string | undefined): { prefix: string; sequence: number } | undefined {
  if (cursor === undefined) return undefined;
  const dot = cursor.lastIndexOf(".");
  const sequence = Number.parseInt(cursor.slice(dot + 1), 36);
  return dot > 0 && Number.isSafeInteger(sequence) ? { prefix: cursor.slice(0, dot + 1), sequence } : undefined;
}

/**
 * True when `cursor` covers `at` (same topic incarnation, sequence at or above). Cursors of
 * another incarnation cover nothing of this one: a re-created topic starts unread.
 */
export function covers(cursor: string | undefined, at: string | undefined): boolean {
  const a = split(cursor);
  const b = split(at);
  return a !== undefined && b !== undefined && a.prefix === b.prefix && a.sequence >= b.sequence;
}

/** @internal */
export class ReadLog {
  server: ReadStateWire | undefined;
  pending: SavedRead["pending"];

  constructor(saved?: SavedRead) {
    this.server = saved?.server;
    this.pending = { cursor: saved?.pending?.cursor, items: saved?.pending?.items?.slice() ?? [] };
  }

  /** The state to show: the server's, with the reads it has not confirmed yet on top. */
  view(): ReadView {
    const server = this.server;
    const cursor = this.#ahead(this.pending.cursor, server?.cursor) ? this.pending.cursor : server?.cursor;
    const items = new Set(server?.items ?? []);
    for (const i of this.pending.items) if (!covers(cursor, i.cursor)) items.add(i.id);
    return { ...(cursor === undefined ? {} : { cursor }), items: [...items] };
  }

  /** True when `a` is a later position than `b` (or of another incarnation, which replaces it). */
  #ahead(a: string | undefined, b: string | undefined): boolean {
    if (a === undefined) return false;
    if (b === undefined) return true;
    const pa = split(a);
    const pb = split(b);
    if (!pa) return false;
    if (!pb || pa.prefix !== pb.prefix) return true;
    return pa.sequence > pb.sequence;
  }

  /** Marks everything up to `cursor` read here; false when it is read already (never back). */
  markRead(cursor: string): boolean {
    if (!this.#ahead(cursor, this.view().cursor)) return false;
    this.pending.cursor = cursor;
    this.pending.items = this.pending.items.filter((i) => !covers(cursor, i.cursor));
    return true;
  }

  /** Marks one event read here; false when it is read already. */
  markItem(id: string, cursor: string): boolean {
    const view = this.view();
    if (covers(view.cursor, cursor) || view.items.includes(id)) return false;
    this.pending.items.push({ id, cursor });
    return true;
  }

  /**
   * The server's state (the answer to a write, or a change made elsewhere): kept when newer;
   * the reads it covers are no longer pending. True when what a tab shows changed.
   */
  fromServer(state: ReadStateWire): boolean {
    if (this.server && state.version < this.server.version) return false;
    const before = JSON.stringify(this.view());
    this.server = state;
    this.#prune();
    return JSON.stringify(this.view()) !== before;
  }

  #prune(): void {
    const server = this.server;
    if (!server) return;
    if (this.pending.cursor !== undefined && !this.#ahead(this.pending.cursor, server.cursor)) this.pending.cursor = undefined;
    this.pending.items = this.pending.items.filter((i) => !covers(server.cursor, i.cursor) && !server.items.includes(i.id));
  }

  /** The next write the server should get, if any: the cursor first, then one item at a time. */
  next(): ReadWrite | undefined {
    this.#prune();
    if (this.pending.cursor !== undefined) return { cursor: this.pending.cursor };
    const item = this.pending.items[0];
    return item ? { item: item.cursor } : undefined;
  }

  /** The server refused `write` for good (not a cursor of the topic, too many items): drop it. */
  drop(write: ReadWrite): void {
    if ("cursor" in write) {
      if (this.pending.cursor === write.cursor) this.pending.cursor = undefined;
    } else {
      this.pending.items = this.pending.items.filter((i) => i.cursor !== write.item);
    }
  }

  save(): SavedRead {
    return { ...(this.server ? { server: this.server } : {}), pending: { ...this.pending, items: this.pending.items.slice() } };
  }
}
