/**
 * One hub subscriber: replays after its cursor, joins the follower's window with no hole and no
 * duplicate at the seam (both sides are filtered by stream sequence), falls back to its own
 * replay when the window leaves it behind, and follows the hub's watermark while idle. Given a
 * `live` sink, it hands over to the follower's live fan-out at the live edge and ends.
 */
import { ClosedError, type TidemarkEvent } from "@tidemark/shared";
import { assertNotPastHead } from "../core/read/past-head.js";
import type { Topic } from "../core/types.js";
import type { Follower } from "./follower.js";
import type { HeadRead } from "./head.js";
import { incarnationOf, recreated, sameIncarnation } from "./incarnation.js";
import type { LiveSink, SharedHubSubscribeOptions, SubscriberHost } from "./contract.js";

/** @internal Most events in one array of `SharedHub.subscribeBatches()`. */
export const MAX_BATCH = 256;


/** The position a subscription starts after; checks the cursor against the head read. */
function startPosition(topic: Topic<unknown>, after: string | undefined, head: HeadRead): number {
  if (after === undefined) return head.sequence;
  const pos = topic.cursorSequence(after);
  // A bare sequence of another incarnation would resume mid-stream in the new one.
  if (!sameIncarnation(incarnationOf(after), head.cursors.incarnation)) throw recreated(topic.id);
  assertNotPastHead(topic.id, pos, head.sequence);
  return pos;
}

/**
 * Joins the follower of (topic, tenant) at a position checked against a head read of the same
 * incarnation. When they disagree, the newer head read wins: a follower of an older stream ends
 * with a mismatch for its subscribers; an older head read of this subscriber is read again.
 */
async function join<T>(
  registry: SubscriberHost,
  topic: Topic<T>,
  tenantId: string | undefined,
  after: string | undefined,
  first: HeadRead,
): Promise<{ follower: Follower<T>; pos: number; head: HeadRead }> {
  let head = first;
  for (;;) {
    const pos = startPosition(topic as Topic<unknown>, after, head);
    const follower = registry.acquire(topic, tenantId);
    if (!follower.cursors || sameIncarnation(follower.cursors.incarnation, head.cursors.incarnation)) return { follower, pos, head };
    registry.release(follower as Follower<unknown>);
    if (head.serial > follower.startSerial) follower.fail(recreated(topic.id));
    else head = await registry.head(topic as Topic<unknown>);
  }
}

/** @internal The iteration behind `SharedHub.subscribeBatches()` (and `subscribe()`). */
export async function* run<T>(
  registry: SubscriberHost,
  topic: Topic<T>,
  tenantId: string | undefined,
  options: SharedHubSubscribeOptions,
  headRead: Promise<HeadRead>,
): AsyncGenerator<TidemarkEvent<T>[]> {
  const { progress, after, cancel, live } = options;
  const signal: { readonly aborted: boolean } | undefined = cancel ?? options.signal;
  if (signal?.aborted) return;
  const joined = await join(registry, topic, tenantId, after, await headRead);
  const { follower, head } = joined;
  let pos = joined.pos;
  // An abort wakes every waiter of the follower (they look again and wait again): cheaper than
  // racing each wait against a per-subscriber promise, and aborts are rare.
  const poke = cancel ? undefined : () => follower.poke();
  if (poke) options.signal?.addEventListener("abort", poke, { once: true });
  cancel?.watch(follower);
  let handedOff = false;
  try {
    if (signal?.aborted) return;
    follower.start(pos, head);
    let caughtUp = false;
    if (after === undefined) {
      caughtUp = true;
      progress?.onCaughtUp?.(follower.cursorAt(pos));
    }
    while (true) {
      const ring = follower.ring!;
      if (pos >= ring.floor) {
        // Attached: read the shared window at our own pace; the same event objects for all.
        let index = ring.indexAfter(pos);
        let batch: TidemarkEvent<T>[] = [];
        while (pos >= ring.floor) {
          if (signal?.aborted) return;
          if (index < ring.start) index = ring.start;
          const event = ring.at(index);
          if (event) {
            index++;
            if (event.streamSequence > pos) {
              pos = event.streamSequence;
              batch.push(event);
              if (batch.length >= MAX_BATCH) {
                yield batch;
                batch = [];
              }
            }
            continue;
          }
          if (batch.length > 0) {
            // Look again after the reader took them: the window may have moved meanwhile.
            yield batch;
            batch = [];
            continue;
          }
          if (follower.error !== undefined) throw follower.error;
          if (follower.retired) throw new ClosedError("the hub was closed");
          if (follower.live) {
            // Everything of the tenant up to the hub's watermark has been yielded: an idle
            // subscriber moves there (so retention passing it is no gap) and reports it.
            const mark = Math.max(pos, follower.watermark);
            if (!caughtUp || mark > pos) {
              caughtUp = true;
              pos = mark;
              progress?.onCaughtUp?.(follower.cursorAt(pos));
            }
            // The callback may have stopped the reader: its poke woke no wait of ours, and a
            // quiet tenant would hold the follower (and its consumer) forever.
            if (signal?.aborted) return;
            if (live) {
              // At the live edge (the ring read to its end, synchronously before this): the
              // follower pushes from here on, and the sink holds our membership.
              const sink = live as LiveSink<T>;
              follower.attach(sink);
              handedOff = true;
              if (cancel) cancel.handOff(follower, sink);
              else options.signal?.addEventListener("abort", () => follower.detach(sink), { once: true });
              return;
            }
          }
          if (signal?.aborted) return;
          await follower.changed();
        }
      }
      // Behind the window: catch up by replay up to a head read now, then look again.
      if (follower.error !== undefined) throw follower.error;
      if (follower.retired) throw new ClosedError("the hub was closed");
      caughtUp = false;
      progress?.onReplay?.();
      registry.stats.subscriberReplays++;
      const until = await registry.head(topic as Topic<unknown>);
      if (signal?.aborted) return;
      if (!sameIncarnation(until.cursors.incarnation, follower.cursors?.incarnation)) {
        const err = recreated(topic.id);
        follower.fail(err);
        throw err;
      }
      if (until.sequence > pos) {
        const replaySignal = cancel ? cancel.signal : options.signal;
        // Not under the registry's catch-up bound: a subscriber that stops reading mid-replay
        // would hold a slot (and starve every follower's catch-up) for as long as it stalls.
        const replay = topic.replay({ after: follower.cursorAt(pos), until: until.cursor, tenantId, signal: replaySignal });
        for await (const event of replay) {
          if (event.streamSequence > pos) {
            pos = event.streamSequence;
            yield [event];
          }
        }
        if (signal?.aborted) return;
        pos = Math.max(pos, until.sequence);
      }
    }
  } finally {
    if (poke) options.signal?.removeEventListener("abort", poke);
    if (!handedOff) {
      cancel?.watch(undefined);
      registry.release(follower as Follower<unknown>);
    }
  }
}
