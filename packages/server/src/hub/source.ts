/**
 * The one interface behind which the two hub modes get a follower its tenant's events: mode
 * "tenant" with a tenant-filtered `follow()` of its own (follow-tenant.ts), mode "topic" from the
 * topic's shared feed (follow-feed.ts). Types only: the follower (follower.ts) and the sources
 * share them without importing each other.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import type { HeadRead } from "./head.js";
import type { TopicWindow } from "./window.js";

/** @internal What a source uses of its follower. */
export interface FollowTarget<T> {
  readonly topic: Topic<T>;
  readonly tenantId: string | undefined;
  /** Aborted when the follower retires or fails: the source stops reading. Made on first use: pass it to reads, test `retired` otherwise. */
  readonly signal: AbortSignal;
  /** True once the follower retired or failed (what `signal.aborted` says, without making the signal). */
  readonly retired: boolean;
  /** Sequence of the last event pushed (or where the ring starts). */
  readonly last: number;
  /** Every event of the tenant up to it was pushed. */
  readonly watermark: number;
  /** The incarnation of the stream the follower started on. */
  readonly incarnation: string | undefined;
  /** True once the backfill is done. */
  readonly live: boolean;
  cursorAt(sequence: number): Cursor;
  /** An event of the tenant, in order; one at or below `last` is dropped (a seam's overlap). */
  push(event: TidemarkEvent<T>): void;
  /** Every event of the tenant up to `sequence` was pushed (the read ended there): `last` moves up to it. */
  reached(sequence: number): void;
  /**
   * Retention removed the backfill's start: the ring starts empty at `sequence`. Subscribers
   * below it fall back to their own replay and meet their own gap.
   */
  skipTo(sequence: number): void;
  /** The backfill reached `sequence`: the follower is live from here. */
  goLive(sequence: number): void;
  fail(err: unknown): void;
}

/** @internal How a follower gets its tenant's events: one per hub mode. */
export interface FollowerSource<T> {
  /** How far behind the head a first subscriber's position may seed the ring (sequences). */
  readonly reach: number;
  /**
   * Backfills from `from` up to the head read, then follows, pushing into `target` until its
   * signal aborts. Broker trouble is retried inside (the retry rule); what ends it rejects, and
   * the follower fails with it.
   */
  run(target: FollowTarget<T>, from: number, head: HeadRead): Promise<void>;
  /**
   * Where an idle tenant's watermark may move, the window (`head`, `first`) just read: every
   * event of the tenant up to it was pushed. Undefined when that cannot be known now.
   */
  idleMark(target: FollowTarget<T>, window: TopicWindow): Promise<number | undefined>;
  /** The follower retired: let go of what the source holds. */
  stop(): void;
}
