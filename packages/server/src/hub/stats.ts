/**
 * Debug counts of a registry's catch-ups (hub mode "topic"): how resuming followers were served
 * and, when they fell back to a replay of their own, why. Read by the scale benchmark.
 */

/** @internal */
export class HubStats {
  /** Followers that caught up from their feed's backlog (no replay of their own). */
  covered = 0;
  /** Whole-topic reads that extended a backlog backwards, and the events they read. */
  coverReads = 0;
  coverEvents = 0;
  /** Time spent in those reads, ms (failed attempts included). */
  coverMs = 0;
  /** Failed extension reads, by reason (error code or what moved). */
  readonly coverFailures: Record<string, number> = {};
  /** Followers that caught up by a tenant replay of their own, by reason. */
  readonly fallbacks: Record<string, number> = {};
  /** Subscribers that fell behind their follower's ring and replayed on their own. */
  subscriberReplays = 0;
  /** When the first and the last follower caught up (Date.now(), 0 before any). */
  firstCaughtUpAt = 0;
  lastCaughtUpAt = 0;
  /** Whole-topic feeds started. */
  feeds = 0;

  caughtUp(): void {
    this.lastCaughtUpAt = Date.now();
    if (this.firstCaughtUpAt === 0) this.firstCaughtUpAt = this.lastCaughtUpAt;
  }

  coverFailed(reason: string): void {
    this.coverFailures[reason] = (this.coverFailures[reason] ?? 0) + 1;
  }

  fellBack(reason: string): void {
    this.fallbacks[reason] = (this.fallbacks[reason] ?? 0) + 1;
  }
}
