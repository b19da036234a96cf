/**
 * What each server frame does to the engine's feeds: one small handler per frame type. The
 * socket handles its own (`welcome`, `ping`, `pong`, `drain`) in socket.ts.
 */
import { ErrorCode, type ErrorFrame, type UnsubscribedFrame } from "@tidemark/shared";
import type { Feeds } from "./feeds.js";
import type { EngineFrame } from "./socket.js";

type Handlers = { [K in EngineFrame["type"]]: (feeds: Feeds, frame: Extract<EngineFrame, { type: K }>) => void };

/** @internal Hands a frame to its handler. */
export function handleFrame(feeds: Feeds, frame: EngineFrame): void {
  const handler = handlers[frame.type] as (feeds: Feeds, frame: EngineFrame) => void;
  handler(feeds, frame);
}

const handlers: Handlers = {
  /** A new event of a hub: to every feed on it. */
  event(feeds, frame) {
    const { delivery, history } = feeds;
    for (const feed of feeds.wire.onHub(frame.hub)) {
      const item = feed.log?.addEvent(frame.event);
      if (!item || !feed.log) continue;
      delivery.deliver(feed, [item]);
      history.mark(feed.log);
    }
  },

  /** The server accepted a subscription: its hub's events come to the feed, which may be shown. */
  subscribed(feeds, frame) {
    const feed = feeds.wire.accept(frame.id, frame.hub);
    if (!feed) return;
    feed.accepted = true;
    feeds.delivery.release(feed);
    // A live subscription has nothing to replay: it is at the live edge once it exists
    // (whether or not the server also sends `caught_up` for it).
    if (feed.request.mode === "live" && !feed.caughtUp) feeds.reachedEdge(feed);
  },

  caught_up(feeds, frame) {
    const feed = feeds.wire.feed(frame.id);
    if (!feed) return;
    // Items before the status they lead to.
    feeds.delivery.flush();
    if (feed.request.mode === "hub" && feed.log && frame.cursor) {
      // A watermark: keeps an idle tenant's cursor ahead of retention.
      feed.log.addWatermark(frame.cursor);
      feeds.history.mark(feed.log);
    }
    feeds.reachedEdge(feed);
  },

  /** The cursor sent is dropped for `head`: a reconnect never sends it again. */
  reset(feeds, frame) {
    const feed = feeds.wire.feed(frame.id);
    if (!feed?.log) return;
    feeds.delivery.deliver(feed, [feed.log.addGap(frame.reason, frame.head, frame.message)]);
    feeds.history.mark(feed.log);
  },

  unsubscribed: ended,
  error: ended,

  refreshed(feeds, frame) {
    feeds.tokens.schedule(frame.expiresAt);
    // The new token may be another user's: that one's history, subscribed again.
    if (frame.principal !== undefined) feeds.adopt(frame.principal);
  },
};

/** The server ended a subscription, or refused a request (no `id`: not about one feed). */
function ended(feeds: Feeds, frame: UnsubscribedFrame | ErrorFrame): void {
  if (frame.id === undefined) {
    if (frame.code === ErrorCode.Unauthorized) feeds.tokens.forget();
    return;
  }
  if (frame.code === undefined) return;
  const feed = feeds.wire.removeId(frame.id);
  if (!feed) return;
  feeds.ended(feed, frame.code, frame.message ?? "", frame.type === "error" ? frame.retryAfterMs : undefined);
}
