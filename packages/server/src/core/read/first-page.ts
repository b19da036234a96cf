/**
 * A first page of history: `topic.cursorBefore({ tenantId, last | since })` finds the cursor a
 * reader with no saved position starts after, so that it gets the tenant's last N retained events
 * (or those published since a time) and then goes on like any resumed reader: replay after the
 * cursor, then live, with no duplicate and no hole at the seam (the hub's own resume does that).
 *
 * JetStream has no "last N messages of a subject" request, so this reads the tenant's retained
 * events once, up to the head captured at the start, through the tenant-filtered replay, and keeps
 * only the sequences and times of the newest N in a ring. Its cost is a read of the tenant's
 * retained window, paid once per feed that has no saved state (a first visit from a browser).
 */
import { InvalidArgumentError, MAX_INITIAL_EVENTS, type Cursor } from "@tidemark/shared";
import type { CoreTopic, FirstPage } from "../types.js";

/** @internal Checks a first-page request; returns how many events at most and the earliest time. */
export function firstPageBounds(page: FirstPage): { limit: number; since: number } {
  if ("last" in page && page.last !== undefined) {
    const n = page.last;
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INITIAL_EVENTS) {
      throw new InvalidArgumentError(`initial.last must be an integer from 1 to ${MAX_INITIAL_EVENTS}, got ${String(n)}`);
    }
    return { limit: n, since: Number.NEGATIVE_INFINITY };
  }
  const raw = (page as { since?: unknown }).since;
  const since = raw instanceof Date ? raw.getTime() : raw;
  if (typeof since !== "number" || !Number.isFinite(since)) {
    throw new InvalidArgumentError("initial needs last (a count) or since (a Date or ms since the epoch)");
  }
  return { limit: MAX_INITIAL_EVENTS, since };
}

/** @internal See `CoreTopic.cursorBefore`. */
export async function cursorBefore(
  topic: CoreTopic<unknown>,
  options: { tenantId?: string; signal?: AbortSignal } & FirstPage,
): Promise<Cursor> {
  const { limit, since } = firstPageBounds(options);
  const head = await topic.head();
  // The newest `limit` events of the tenant at or after `since`, as a ring of sequences.
  const ring: number[] = [];
  let next = 0;
  for await (const event of topic.replay({ tenantId: options.tenantId, until: head, signal: options.signal })) {
    if (event.publishedAt < since) continue;
    if (ring.length < limit) ring.push(event.streamSequence);
    else ring[next] = event.streamSequence;
    next = (next + 1) % limit;
  }
  if (ring.length === 0) return head;
  const oldest = ring.length < limit ? ring[0]! : ring[next]!;
  return topic.cursorAt(oldest - 1);
}
