/**
 * The hub's contract with the layers above it and with its own subscribers: what a hub of one
 * (topic, tenant) offers the bridge (`BatchHub`), the options and progress callbacks of one
 * subscription, and what a subscriber uses of its registry (`SubscriberHost`). Types only, so
 * that the registry, the subscribers and the bridge share them without importing each other.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import type { Hub, HubSubscribeOptions, Topic } from "../core/types.js";
import type { Cancellation } from "./cancellation.js";
import type { Follower } from "./follower.js";
import type { HeadRead } from "./head.js";
import type { HubStats } from "./stats.js";
import type { LiveSink } from "./sink.js";

export type { LiveSink };

/** Progress callbacks of one subscription (used by the bridge for `caught_up` frames and metrics). */
export interface HubProgress {
  /**
   * The subscription reached the live edge. `cursor` is a watermark: every event up to it was
   * yielded. Called again, with a newer watermark, while the subscription is idle and the hub's
   * watermark moves on (other tenants' events, see `watermarkIntervalMs`).
   */
  onCaughtUp?(cursor: Cursor): void;
  /** The subscription was behind the in-memory window and started a replay. */
  onReplay?(): void;
}

export interface SharedHubSubscribeOptions extends HubSubscribeOptions {
  progress?: HubProgress;
  /**
   * Hands the subscriber over to the hub's live fan-out when it reaches the live edge: the
   * iteration attaches `live` and ends. Aborting the iteration's `cancel` (or `signal`) later
   * detaches it (without a `detached()` call). Each iteration attaches at most once.
   */
  live?: LiveSink;
  /**
   * A lighter stand-in for `signal` when there are many subscribers (an AbortController costs
   * about a kilobyte). Used instead of `signal` when given.
   */
  cancel?: Cancellation;
}

/**
 * The shared hub of one (topic, tenant) as the bridge reads it: `SharedHub` (registry.ts)
 * implements it, and `topic.hub()` of a topic made by a Sync returns one. Published, not
 * internal: the published `SharedHub` declaration names it.
 */
export interface BatchHub<T = unknown> extends Hub<T> {
  subscribe(options?: SharedHubSubscribeOptions): AsyncIterable<TidemarkEvent<T>>;
  /**
   * `subscribe()` in arrays of the events the subscriber could take at once. The arrays and
   * their events are shared between subscribers: never change them.
   */
  subscribeBatches(options?: SharedHubSubscribeOptions): AsyncIterable<readonly TidemarkEvent<T>[]>;
}

/** @internal What one subscriber (subscriber.ts) uses of its registry. */
export interface SubscriberHost {
  /** Joins (creating if needed) the follower of (topic, tenant). */
  acquire<T>(topic: Topic<T>, tenantId: string | undefined): Follower<T>;
  /** Leaves a follower joined with `acquire()`; the last one out retires it. */
  release(follower: Follower<unknown>): void;
  /** A head read started after this call; `urgent` skips the spacing. */
  head(topic: Topic<unknown>, urgent?: boolean): Promise<HeadRead>;
  /** Debug counts of catch-ups. */
  readonly stats: HubStats;
}
