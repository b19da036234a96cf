/**
 * Which `Feeds` method each server frame goes to. The socket handles its own frames
 * (`welcome`, `ping`, `pong`, `drain`) in socket.ts; what a frame does to the feeds is in
 * feeds.ts, the one place that changes them.
 */
import type { Feeds } from "./feeds.js";
import type { EngineFrame } from "./socket.js";

type Handlers = { [K in EngineFrame["type"]]: (feeds: Feeds, frame: Extract<EngineFrame, { type: K }>) => void };

const handlers: Handlers = {
  event: (feeds, frame) => feeds.event(frame),
  subscribed: (feeds, frame) => feeds.subscribed(frame),
  caught_up: (feeds, frame) => feeds.caughtUp(frame),
  reset: (feeds, frame) => feeds.reset(frame),
  unsubscribed: (feeds, frame) => feeds.ended(frame),
  error: (feeds, frame) => feeds.ended(frame),
  refreshed: (feeds, frame) => feeds.refreshed(frame),
  read_state: (feeds, frame) => feeds.readState(frame),
};

/** @internal Hands a frame to its handler. */
export function handleFrame(feeds: Feeds, frame: EngineFrame): void {
  const handler = handlers[frame.type] as (feeds: Feeds, frame: EngineFrame) => void;
  handler(feeds, frame);
}
