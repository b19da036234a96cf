/** Resolved settings of a hub's followers, how a follower reaches its topic's feed, and a wake-up signal. */
import type { TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import type { HeadRead } from "./head.js";
import type { TopicFeed } from "./feed.js";
import type { Limiter } from "./limit.js";
import type { HubStats } from "./stats.js";
export { deferred, type Deferred } from "../core/deferred.js";

/**
 * A topic feed's backlog reaches at least this many sequences behind its newest event (or
 * `maxBackfillSequences`, if larger), within the `feedBacklogBytes` hub option (8 MiB, which
 * binds first for events of a few hundred bytes).
 */
export const FEED_BACKLOG_SEQUENCES = 250_000;

/** @internal Resolved hub settings. */
export interface HubSettings {
  ringEvents: number;
  ringBytes: number;
  maxBackfillSequences: number;
  /** Reach of a topic feed's backlog (see `FEED_BACKLOG_SEQUENCES`) and its byte bound. */
  backlogSequences: number;
  backlogBytes: number;
  watermarkIntervalMs: number;
  windowPollMs: number;
  sizeOf: (event: TidemarkEvent) => number;
}

/** @internal How a follower of hub mode "topic" reaches its topic's feed (see `feed.ts`): one per registry. */
export interface FeedLink {
  /** The running feed of `topic` of the head's incarnation (started at that head if none runs). */
  feedFor<T>(topic: Topic<T>, head: HeadRead): TopicFeed<T> | undefined;
  /** Bound on catch-up replays at once. */
  limiter: Limiter;
  stats: HubStats;
}
