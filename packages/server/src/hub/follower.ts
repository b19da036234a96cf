/**
 * One hub's shared follower: a single `topic.follow()` per (topic, tenant) feeding a bounded
 * ring of recent events that every attached subscriber reads at its own pace, and the hub's one
 * live fan-out: each event is handed synchronously to the sinks (contract.ts) that reached the
 * live edge. The follower never waits for a subscriber or a sink; one the ring leaves behind, or
 * a sink that cannot take an event, catches up by replay from its own position.
 *
 * The follower also keeps the hub's watermark: every event of the tenant up to it was pushed.
 * Events move it; for an idle tenant the registry's window checks move it (see `observe`).
 */
import { BrokerUnavailableError, ErrorCode, isTidemarkError, RetentionGapError, type Cursor, type TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import type { HeadRead } from "./head.js";
import { failureOf } from "./failure.js";
import { IncarnationCursors, recreated, sameIncarnation, incarnationOf } from "./incarnation.js";
import { Ring } from "./ring.js";
import type { TopicWindow } from "./window.js";
import type { LiveSink } from "./contract.js";
import { BrokerRetry } from "./retry.js";
import type { TopicFeed } from "./feed.js";
import { recordDelivery } from "../observe/trace.js";
import { deferred, type FeedLink, type HubSettings } from "./settings.js";

export type { HubSettings };

/** @internal */
export class Follower<T = unknown> {
  readonly topic: Topic<T>;
  readonly tenantId: string | undefined;
  /** Attached and catching-up subscribers; the follower retires when it drops to zero. */
  members = 0;
  /** Set once the follower has started: events above `ring.floor` are in the ring. */
  ring: Ring<T> | undefined;
  /** True once the follower has reached the head read at its start (backfill done). */
  live = false;
  /** Every event of the tenant up to this sequence has been pushed into the ring. */
  watermark = 0;
  /** Terminal failure of the follower; subscribers drain the ring, then get it. */
  error: unknown;
  /** Called once when the follower fails or is retired. */
  onEnd: (() => void) | undefined;
  /** Cursors of the incarnation the follower started on; set by `start`. */
  cursors: IncarnationCursors | undefined;
  /** Serial of the head read the follower started from (see {@link HeadRead.serial}). */
  startSerial = 0;
  readonly #settings: HubSettings;
  readonly #abort = new AbortController();
  #last = 0;
  #tick = deferred();
  #refreshedAt = 0;
  #refreshing = false;
  readonly #link: FeedLink<T> | undefined;
  #feed: TopicFeed<T> | undefined;
  /** Events the feed handed over while the backfill below its seam runs. */
  #buffer: TidemarkEvent<T>[] | undefined;
  /** The live fan-out: sinks at the live edge, each with the release of the membership it holds. */
  readonly #sinks = new Map<LiveSink<T>, () => void>();

  /** With `link`, the follower reads its topic's shared feed instead of a `follow()` of its own. */
  constructor(topic: Topic<T>, tenantId: string | undefined, settings: HubSettings, link?: FeedLink<T>) {
    this.topic = topic;
    this.tenantId = tenantId;
    this.#settings = settings;
    this.#link = link;
  }

  get retired(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Resolves at the next push, watermark move, failure or retirement. */
  changed(): Promise<void> {
    return this.#tick.promise;
  }

  /** A cursor of the follower's incarnation. */
  cursorAt(sequence: number): Cursor {
    return this.cursors ? this.cursors.at(sequence) : this.topic.cursorAt(sequence);
  }

  /**
   * Starts following unless already started. The first subscriber's position seeds the start
   * (if it is within `maxBackfillSequences` of the head, or on a topic feed within its backlog's
   * reach), so a fresh hub whose first subscribers resume a little behind serves them from the
   * ring instead of one replay each.
   */
  start(position: number, head: HeadRead): void {
    if (this.ring) return;
    const headSequence = head.sequence;
    this.cursors = new IncarnationCursors(head.cursor, (s) => this.topic.cursorAt(s));
    this.startSerial = head.serial;
    const reach = this.#link ? this.#settings.backlogSequences : this.#settings.maxBackfillSequences;
    const from = headSequence - position <= reach ? Math.min(position, headSequence) : headSequence;
    this.ring = new Ring<T>(from, this.#settings.ringEvents, this.#settings.ringBytes);
    this.watermark = from;
    this.#last = from;
    this.#refreshedAt = Date.now();
    if (this.#link) void this.#runShared(from, head, this.#link);
    else void this.#run(from, headSequence);
  }

  /** Wakes every waiting subscriber (one of them was aborted). */
  poke(): void {
    this.#wake();
  }

  /** Stops the follower (its last subscriber left); its sinks go back to reading on their own. */
  retire(): void {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    this.#feed?.detach(this);
    this.#buffer = undefined;
    this.#wake();
    this.onEnd?.();
    for (const sink of [...this.#sinks.keys()]) if (this.#drop(sink)) sink.detached(this.error);
  }

  /**
   * Adds `sink` to the live fan-out. Its subscriber read the ring to its end and saw the follower
   * live, synchronously before this call, so the next event pushed is the sink's next one: no
   * hole, no duplicate. The sink holds its subscriber's membership: `release` runs once, when it
   * is detached. Returns its detach (which makes no `detached()` call).
   */
  attach(sink: LiveSink<T>, release: () => void): () => void {
    if (this.retired || this.#sinks.has(sink)) {
      release();
      if (this.retired) sink.detached(this.error);
    } else this.#sinks.set(sink, release);
    return () => void this.#drop(sink);
  }

  /** Sinks in the live fan-out (for stats and tests). */
  get sinkCount(): number {
    return this.#sinks.size;
  }

  #drop(sink: LiveSink<T>): boolean {
    const release = this.#sinks.get(sink);
    if (!release) return false;
    this.#sinks.delete(sink);
    release();
    return true;
  }

  /** Hands a pushed event to every sink above which it is; one that cannot take it is detached. */
  #fanOut(event: TidemarkEvent<T>): void {
    const seq = event.streamSequence;
    for (const sink of this.#sinks.keys()) {
      if (seq <= sink.position) continue;
      if (sink.canTake()) sink.take(event);
      else if (this.#drop(sink)) sink.detached();
    }
  }

  /** The watermark moved while idle: sinks below it learn the new one (one cursor for all). */
  #advance(): void {
    if (this.#sinks.size === 0) return;
    const position = this.watermark;
    const cursor = this.cursorAt(position);
    for (const sink of this.#sinks.keys()) if (sink.position < position) sink.caughtUp(cursor, position);
  }

  /** Ends the follower with `err`: its subscribers drain the ring, then get it. */
  fail(err: unknown): void {
    if (this.#abort.signal.aborted) return;
    this.error = err;
    this.retire();
  }

  /**
   * One look at the topic's retained window (shared by every hub of the topic). A re-created
   * stream ends the follower with a mismatch. Returns true when the watermark should be
   * refreshed: `watermarkIntervalMs` has passed since the last fresh watermark, or retention is
   * moving the window's front (or may soon: the stream is half full) and the watermark is in the
   * older half between the front and the head — so the refresh comes before retention reaches
   * it. (On a topic far from its limits, idle hubs wait for the interval.)
   */
  observe(window: TopicWindow, now: number, frontMoved: boolean): boolean {
    if (!this.live || this.retired || this.#refreshing) return false;
    if (!sameIncarnation(window.incarnation, this.cursors?.incarnation)) {
      this.fail(recreated(this.topic.id));
      return false;
    }
    if (window.head <= this.watermark) return false;
    const { first } = window;
    const due =
      now - this.#refreshedAt >= this.#settings.watermarkIntervalMs ||
      ((frontMoved || window.filling) && first !== undefined && this.watermark < first + (window.head - first) / 2);
    // Claimed until refreshWatermark() ends, so a queued refresh is not queued twice.
    if (due) this.#refreshing = true;
    return due;
  }

  /**
   * Moves the watermark to the window's head (read before this call) when the tenant has nothing
   * up to it that this follower did not push — the source's rule for idle tenants: its newest
   * retained event is at or below the follower's last one, and retention had removed nothing past
   * the current watermark (else an event removed before the follower got it would go unnoticed).
   * One `latestCursor()` per hub, whatever its subscriber count; none when the follower's
   * own events are already past the head. Called after `observe()` returned true.
   */
  async refreshWatermark(window: TopicWindow): Promise<void> {
    const { head, first } = window;
    this.#refreshing = true;
    try {
      if (this.retired) return;
      if (this.#feed) {
        // The feed handed over every event up to its position: no lookup needed.
        const position = this.#feed.position;
        this.#refreshedAt = Date.now();
        if (position > this.watermark) {
          this.watermark = position;
          this.#wake();
          this.#advance();
        }
        return;
      }
      if (this.#last < head) {
        if (first !== undefined && first > this.watermark + 1) return;
        const latest = await this.topic.latestCursor({ tenantId: this.tenantId });
        if (this.retired) return;
        if (latest !== undefined && (!this.#sameStream(latest) || this.topic.cursorSequence(latest) > this.#last)) return;
      }
      this.#refreshedAt = Date.now();
      if (head > this.watermark) {
        this.watermark = head;
        this.#wake();
        this.#advance();
      }
    } catch {
      // Broker trouble: the next look tries again; the follower itself reports what lasts.
    } finally {
      this.#refreshing = false;
    }
  }

  #sameStream(cursor: string): boolean {
    if (sameIncarnation(incarnationOf(cursor), this.cursors?.incarnation)) return true;
    this.fail(recreated(this.topic.id));
    return false;
  }

  async #run(from: number, head: number): Promise<void> {
    const { topic, tenantId } = this;
    const signal = this.#abort.signal;
    // Broker trouble (a timeout, a reconnect) is retried here, from the last event pushed, so
    // that it does not fail every subscriber at once and send them all back at the broker.
    const retry = new BrokerRetry();
    try {
      let backfilled = from >= head;
      while (!backfilled && !signal.aborted) {
        try {
          const backlog = topic.replay({ after: this.cursorAt(this.#last), until: this.cursorAt(head), tenantId, signal });
          for await (const event of backlog) {
            this.#push(event);
            retry.progress();
          }
          backfilled = true;
        } catch (err) {
          if (signal.aborted) return;
          // The seeding cursor was overtaken by retention: start at the head instead; the
          // subscribers below it fall back to their own replay and get their own gap.
          if (isTidemarkError(err) && err.code === ErrorCode.RetentionGap) {
            this.ring!.reset(head);
            this.#last = head;
            backfilled = true;
          } else await retry.wait(err);
        }
      }
      if (signal.aborted) return;
      this.live = true;
      if (head > this.watermark) this.watermark = head;
      this.#wake();
      while (!signal.aborted) {
        try {
          const after = this.cursorAt(Math.max(this.#last, this.watermark));
          for await (const event of topic.follow({ after, tenantId, signal })) {
            this.#push(event);
            retry.progress();
          }
          if (!signal.aborted) throw new BrokerUnavailableError("the hub's follower ended unexpectedly");
        } catch (err) {
          if (signal.aborted) return;
          // Retention passed the follow's start, but not the watermark: the tenant had nothing
          // in what was removed (an idle tenant on a busy topic). Follow on from the watermark.
          if (err instanceof RetentionGapError && err.firstAvailableSequence <= this.watermark + 1) continue;
          await retry.wait(err);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      const failure = await failureOf(err, topic as Topic<unknown>, this.cursors?.incarnation);
      if (!signal.aborted) this.fail(failure);
    }
  }

  /** @internal An event of the tenant from the topic's feed. */
  deliver(event: TidemarkEvent<T>): void {
    if (this.#buffer) this.#buffer.push(event);
    else if (this.live) this.#push(event);
  }

  /**
   * Hub mode "topic": joins the feed, replays the tenant from the start position up to the
   * feed's position at the join (the seam) while the feed's newer events wait in a buffer, then
   * pushes those. `#push` drops what is at or below the last pushed sequence, so the seam has no
   * hole and no duplicate.
   */
  async #runShared(from: number, head: HeadRead, link: FeedLink<T>): Promise<void> {
    const { topic, tenantId } = this;
    const signal = this.#abort.signal;
    try {
      const feed = link.feedFor(head);
      if (!feed) throw recreated(topic.id);
      this.#feed = feed;
      this.#buffer = [];
      const seam = feed.attach(this);
      // Served from the feed's recent events when it holds (or can read, once for every tenant
      // asking) everything above our position; else a replay of our own, below.
      if (this.#last < seam) {
        const why = await feed.cover(this.#last);
        const events = why === undefined && !signal.aborted ? feed.backlog.slice(tenantId, this.#last, seam) : undefined;
        if (events) {
          for (const event of events) this.#push(event);
          if (this.#last < seam) this.#last = seam;
          link.stats.covered++;
        } else if (!signal.aborted) link.stats.fellBack(why ?? "trimmed after the cover");
      }
      const retry = new BrokerRetry();
      while (this.#last < seam && !signal.aborted) {
        const release = await link.limiter.acquire();
        try {
          if (signal.aborted) return;
          const backlog = topic.replay({ after: this.cursorAt(this.#last), until: this.cursorAt(seam), tenantId, signal });
          for await (const event of backlog) {
            this.#push(event);
            retry.progress();
          }
          if (this.#last < seam) this.#last = seam;
        } catch (err) {
          if (signal.aborted) return;
          // As in `#run`: subscribers below the seam fall back to their own replay and gap.
          if (isTidemarkError(err) && err.code === ErrorCode.RetentionGap) {
            this.ring!.reset(seam);
            this.#last = seam;
          } else await retry.wait(err);
        } finally {
          release();
        }
      }
      if (signal.aborted) return;
      const buffered = this.#buffer ?? [];
      this.#buffer = undefined;
      for (const event of buffered) this.#push(event);
      this.live = true;
      if (seam > this.watermark) this.watermark = seam;
      link.stats.caughtUp();
      this.#wake();
    } catch (err) {
      if (signal.aborted) return;
      const failure = await failureOf(err, topic as Topic<unknown>, this.cursors?.incarnation);
      if (!signal.aborted) this.fail(failure);
    }
  }

  #push(event: TidemarkEvent<T>): void {
    if (event.streamSequence <= this.#last) return;
    // An event of another incarnation: the stream was re-created under this follower.
    if (this.cursors && !this.cursors.owns(event.cursor)) return this.fail(recreated(this.topic.id));
    this.#last = event.streamSequence;
    this.ring!.push(event, this.#settings.sizeOf(event));
    recordDelivery(event, this.topic.id, this.members);
    if (this.#sinks.size > 0) this.#fanOut(event);
    if (event.streamSequence > this.watermark) this.watermark = event.streamSequence;
    // An event is a fresh watermark too: the periodic refresh is for tenants that publish nothing.
    this.#refreshedAt = Date.now();
    this.#wake();
  }

  #wake(): void {
    const tick = this.#tick;
    this.#tick = deferred();
    tick.resolve();
  }
}
