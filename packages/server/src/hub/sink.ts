/**
 * The reader side of the hub's live fan-out, in a file of its own (types only) so that the
 * follower, which pushes to sinks, and the hub's contract (contract.ts), which names the
 * follower, need not import each other.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";

/**
 * A reader the hub pushes its live events to (the bridge's subscriptions): the hub's one live
 * fan-out. Handed over with {@link SharedHubSubscribeOptions.live}, it gets each new event of
 * the tenant synchronously, in order, from the follower's push; no iteration step, promise or
 * closure per reader and event.
 */
export interface LiveSink<T = unknown> {
  /** Stream sequence of the last event or watermark the sink has: the hub skips what is at or below it. */
  readonly position: number;
  /** False when it cannot take an event now (a full send buffer): the hub detaches it. */
  canTake(): boolean;
  /** The next event of the tenant. */
  take(event: TidemarkEvent<T>): void;
  /** A newer watermark while the tenant is idle: every event up to `position` was pushed. */
  caughtUp(cursor: Cursor, position: number): void;
  /**
   * The hub stopped pushing to it: it could not take an event, or the hub's follower ended. The
   * sink goes on with an iteration of its own from its position. `error` is the follower's
   * failure (a re-created stream, a removal that passed the tenant, broker trouble past the retry
   * budget), which an iteration would meet after the window's events (the sink has them all):
   * the sink handles it as its own iteration would. None when the follower was retired (the hub
   * closed, its last reader left) or the sink was full.
   */
  detached(error?: unknown): void;
}
