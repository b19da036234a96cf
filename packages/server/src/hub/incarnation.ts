/**
 * Cursors of one incarnation of a topic. A hub follows the stream that existed when it started;
 * when the topic is destroyed and re-created, the hub's positions (bare stream sequences) mean
 * nothing in the new stream, so every cursor a hub hands out or passes to the core is built
 * from the incarnation it started on, never from the topic's current one.
 */
import { CursorMismatchError, cursorPrefix, cursorWithPrefix, decodeCursor, type Cursor } from "@tidemark/shared";

/** The incarnation a cursor names (`""`: made before first use, valid for any); undefined when it is not an `s6t.` cursor. */
export function incarnationOf(cursor: string): string | undefined {
  try {
    return decodeCursor(cursor).incarnation;
  } catch {
    return undefined;
  }
}

/** True when a cursor of incarnation `cursor` may be used in incarnation `current`. */
export function sameIncarnation(cursor: string | undefined, current: string | undefined): boolean {
  return cursor === undefined || current === undefined || cursor === "" || current === "" || cursor === current;
}

/** The error for a position of an older incarnation. */
export function recreated(topicId: string): CursorMismatchError {
  return new CursorMismatchError(
    `topic ${JSON.stringify(topicId)} was destroyed and re-created since this cursor was issued; resume from its head`,
  );
}

/** Builds cursors of the incarnation a head cursor names (or the topic's own, for other cursor formats). */
export class IncarnationCursors {
  readonly incarnation: string | undefined;
  readonly #prefix: string | undefined;
  /** The topic, whose own cursors serve other cursor formats (kept rather than a closure: one per follower). */
  readonly #fallback: { cursorAt(sequence: number): Cursor };

  constructor(head: Cursor, fallback: { cursorAt(sequence: number): Cursor }) {
    this.#fallback = fallback;
    try {
      const parts = decodeCursor(head);
      this.incarnation = parts.incarnation;
      this.#prefix = cursorPrefix(parts);
    } catch {
      this.incarnation = undefined;
      this.#prefix = undefined;
    }
  }

  at(sequence: number): Cursor {
    return this.#prefix === undefined ? this.#fallback.cursorAt(sequence) : cursorWithPrefix(this.#prefix, sequence);
  }

  /**
   * True when `cursor` names exactly this incarnation of this topic, so cursors built from it
   * would be these: a head reader gives the same instance to every follower it starts (one
   * prefix string for all, not about 200 bytes of one each).
   */
  sameAs(cursor: Cursor): boolean {
    return this.#prefix !== undefined && cursor.startsWith(this.#prefix);
  }

  /** True when an event's cursor belongs to this incarnation (a cheap prefix test, once per event). */
  owns(cursor: string): boolean {
    return this.#prefix === undefined || this.incarnation === "" || cursor.startsWith(this.#prefix);
  }
}
