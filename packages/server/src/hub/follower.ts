/**
 * One hub's shared follower of (topic, tenant): it fills a bounded ring of recent events that
 * every attached subscriber reads at its own pace, and it is the hub's one live fan-out: each
 * event is handed synchronously to the sinks (contract.ts) that reached the live edge. Its events
 * come from a source, one per hub mode behind one interface (source.ts): a follow of its own
 * (follow-tenant.ts) or the topic's shared feed (follow-feed.ts). The follower never waits for a
 * subscriber or a sink; one the ring leaves behind, or a sink that cannot take an event, catches
 * up by replay from its own position.
 *
 * The follower also keeps the hub's watermark: every event of the tenant up to it was pushed.
 * Events move it; for an idle tenant the registry's window checks move it (see `observe`).
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import type { HeadRead } from "./head.js";
import { failureOf } from "./failure.js";
import { recreated, sameIncarnation, type IncarnationCursors } from "./incarnation.js";
import { Ring } from "./ring.js";
import type { TopicWindow } from "./window.js";
import type { LiveSink } from "./sink.js";
import type { FollowerSource, FollowTarget } from "./source.js";
import { recordDelivery } from "../observe/trace.js";
import { deferred, type Deferred, type HubSettings } from "./settings.js";

export type { HubSettings };

/** @internal */
export class Follower<T = unknown> implements FollowTarget<T> {
  readonly topic: Topic<T>;
  readonly tenantId: string | undefined;
  /** Attached and catching-up subscribers, and sinks; the follower retires when it drops to zero. */
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
  onEnd: ((follower: Follower<unknown>) => void) | undefined;
  /** Cursors of the incarnation the follower started on; set by `start`. */
  cursors: IncarnationCursors | undefined;
  /** Serial of the head read the follower started from (see {@link HeadRead.serial}). */
  startSerial = 0;
  readonly #settings: HubSettings;
  readonly #source: FollowerSource<T>;
  /**
   * Made when a source first asks for the signal (a replay or a tenant consumer needs one): an
   * AbortSignal is an EventTarget with two Maps, ~600 bytes, and in mode "topic" a follower whose
   * tenant resumes from the feed never needs it (one per connection with a tenant per user).
   */
  #abort: AbortController | undefined;
  /**
   * Kept beside the signal: the window check reads it for every follower every `windowPollMs`,
   * and `AbortSignal.aborted` is a checked accessor (12 % of an idle bridge's CPU with one tenant
   * per connection).
   */
  #retired = false;
  #last = 0;
  /** Made when a subscriber waits (`changed()`), not for every follower and push: most have nobody waiting. */
  #tick: Deferred | undefined;
  #refreshedAt = 0;
  /**
   * Where in the second half of `watermarkIntervalMs` this follower's refreshes fall (ms, drawn
   * once, below half the interval): its interval counts from a point this far before it was last
   * seen current, so the idle followers of a topic that moves after a quiet spell refresh spread
   * over the second half of the next interval, not all at the first look (a `caught_up` per online
   * user at once); never sooner than half an interval. An integer: a small-integer field.
   */
  readonly #phase: number;
  #refreshing = false;
  #cursorSequence = -1;
  #cursor: Cursor | undefined;
  /**
   * The live fan-out: sinks at the live edge, each holding a membership. Most followers serve one
   * subscription (a user's own tenant), so one sink is held as is and a Set (about 190 bytes)
   * is made for the second.
   */
  #sink: LiveSink<T> | undefined;
  #sinks: Set<LiveSink<T>> | undefined;

  constructor(topic: Topic<T>, tenantId: string | undefined, settings: HubSettings, source: FollowerSource<T>) {
    this.topic = topic;
    this.tenantId = tenantId;
    this.#settings = settings;
    this.#source = source;
    this.#phase = Math.floor((Math.random() * settings.watermarkIntervalMs) / 2);
  }

  get retired(): boolean {
    return this.#retired;
  }

  /** @internal FollowTarget */
  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.#retired) this.#abort.abort();
    }
    return this.#abort.signal;
  }

  /** @internal FollowTarget: sequence of the last event pushed. */
  get last(): number {
    return this.#last;
  }

  /** @internal FollowTarget */
  get incarnation(): string | undefined {
    return this.cursors?.incarnation;
  }

  /** Resolves at the next push, watermark move, failure or retirement. */
  changed(): Promise<void> {
    return (this.#tick ??= deferred()).promise;
  }

  /**
   * A cursor of the follower's incarnation. The last one made is kept and given again: the idle
   * subscribers of a hub all stand at its watermark, and each bridge subscription keeps the
   * cursor it was given, so they share one string instead of one each (72 bytes a subscription).
   */
  cursorAt(sequence: number): Cursor {
    if (sequence === this.#cursorSequence && this.#cursor !== undefined) return this.#cursor;
    const cursor = this.cursors ? this.cursors.at(sequence) : this.topic.cursorAt(sequence);
    this.#cursorSequence = sequence;
    this.#cursor = cursor;
    return cursor;
  }

  /**
   * Starts following unless already started. The first subscriber's position seeds the start
   * (if it is within the source's reach behind the head: `maxBackfillSequences`, or on a topic
   * feed its backlog's), so a fresh hub whose first subscribers resume a little behind serves
   * them from the ring instead of one replay each.
   */
  start(position: number, head: HeadRead): void {
    if (this.ring) return;
    const headSequence = head.sequence;
    this.cursors = head.cursors;
    this.#cursor = undefined;
    this.startSerial = head.serial;
    const from = headSequence - position <= this.#source.reach ? Math.min(position, headSequence) : headSequence;
    this.ring = new Ring<T>(from, this.#settings.ringEvents, this.#settings.ringBytes);
    this.watermark = from;
    this.#last = from;
    // The first refresh at the phase's point of the first interval: a crowd subscribing at once
    // (a reconnect storm) does not come back due at once either.
    this.#refreshedAt = Date.now() - this.#phase;
    this.#source.run(this, from, head).catch(async (err: unknown) => {
      if (this.#retired) return;
      const failure = await failureOf(err, this.topic as Topic<unknown>, this.cursors?.incarnation);
      if (!this.#retired) this.fail(failure);
    });
  }

  /** Wakes every waiting subscriber (one of them was aborted). */
  poke(): void {
    this.#wake();
  }

  /** Stops the follower (its last subscriber left); its sinks go back to reading on their own. */
  retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    this.#abort?.abort();
    this.#source.stop();
    this.#wake();
    this.onEnd?.(this as Follower<unknown>);
    const sinks = this.#sinks ? [...this.#sinks] : this.#sink ? [this.#sink] : [];
    for (const sink of sinks) if (this.#drop(sink)) sink.detached(this.error);
  }

  /**
   * Adds `sink` to the live fan-out. Its subscriber read the ring to its end and saw the follower
   * live, synchronously before this call, so the next event pushed is the sink's next one: no
   * hole, no duplicate. The sink takes over its subscriber's membership: it is given back when
   * the sink is detached (`detach`, a full sink, the follower's end).
   */
  attach(sink: LiveSink<T>): void {
    if (!this.retired && this.#sink !== sink && !this.#sinks?.has(sink)) {
      if (this.#sinks) this.#sinks.add(sink);
      else if (this.#sink === undefined) this.#sink = sink;
      else {
        this.#sinks = new Set([this.#sink, sink]);
        this.#sink = undefined;
      }
      return;
    }
    this.members--;
    if (this.retired) sink.detached(this.error);
  }

  /** Takes `sink` out of the live fan-out (no `detached()` call); the last member out retires the follower. */
  detach(sink: LiveSink<T>): void {
    this.#drop(sink);
  }

  #drop(sink: LiveSink<T>): boolean {
    if (this.#sink === sink) this.#sink = undefined;
    else if (!this.#sinks?.delete(sink)) return false;
    if (--this.members <= 0) this.retire();
    return true;
  }

  /** Hands a pushed event to every sink above which it is; one that cannot take it is detached. */
  #fanOut(event: TidemarkEvent<T>): void {
    if (this.#sink) this.#offer(this.#sink, event);
    else if (this.#sinks) for (const sink of this.#sinks) this.#offer(sink, event);
  }

  #offer(sink: LiveSink<T>, event: TidemarkEvent<T>): void {
    if (event.streamSequence <= sink.position) return;
    if (sink.canTake()) sink.take(event);
    else if (this.#drop(sink)) sink.detached();
  }

  /** The watermark moved while idle: sinks below it learn the new one (one cursor for all). */
  #advance(): void {
    if (this.#sink === undefined && !this.#sinks?.size) return;
    const position = this.watermark;
    const cursor = this.cursorAt(position);
    if (this.#sink) {
      if (this.#sink.position < position) this.#sink.caughtUp(cursor, position);
    } else for (const sink of this.#sinks!) if (sink.position < position) sink.caughtUp(cursor, position);
  }

  /** Ends the follower with `err`: its subscribers drain the ring, then get it. */
  fail(err: unknown): void {
    if (this.#retired) return;
    this.error = err;
    this.retire();
  }

  /**
   * One look at the topic's retained window (shared by every hub of the topic). A re-created
   * stream ends the follower with a mismatch. Returns true when the watermark should be
   * refreshed: `watermarkIntervalMs` has passed since the last fresh watermark, or retention is
   * moving the window's front (or may soon: the stream is half full) and the watermark is in the
   * older half between the front and the head — so the refresh comes before retention reaches
   * it. (On a topic far from its limits, idle hubs wait for the interval.) A follower seen
   * current (its watermark at the head) restarts its interval at its phase before now: the
   * interval is at most `watermarkIntervalMs` from the last moment its watermark was the head,
   * and the followers of one topic are not all due together when the head moves.
   */
  observe(window: TopicWindow, now: number, frontMoved: boolean): boolean {
    if (!this.live || this.retired || this.#refreshing) return false;
    if (!sameIncarnation(window.incarnation, this.cursors?.incarnation)) {
      this.fail(recreated(this.topic.id));
      return false;
    }
    if (window.head <= this.watermark) {
      this.#refreshedAt = now - this.#phase;
      return false;
    }
    const { first } = window;
    const due =
      now - this.#refreshedAt >= this.#settings.watermarkIntervalMs ||
      ((frontMoved || window.filling) && first !== undefined && this.watermark < first + (window.head - first) / 2);
    // Claimed until refreshWatermark() ends, so a queued refresh is not queued twice.
    if (due) this.#refreshing = true;
    return due;
  }

  /**
   * Moves the watermark to where the source says an idle tenant's events were all pushed (see
   * `FollowerSource.idleMark`). Called after `observe()` returned true.
   */
  async refreshWatermark(window: TopicWindow): Promise<void> {
    this.#refreshing = true;
    try {
      if (this.retired) return;
      const mark = await this.#source.idleMark(this, window);
      if (mark === undefined || this.retired) return;
      this.#refreshedAt = Date.now();
      if (mark > this.watermark) {
        this.watermark = mark;
        this.#wake();
        this.#advance();
      }
    } catch {
      // Broker trouble: the next look tries again; the follower itself reports what lasts.
    } finally {
      this.#refreshing = false;
    }
  }

  /** @internal FollowTarget */
  push(event: TidemarkEvent<T>): void {
    this.#push(event);
  }

  /** @internal FollowTarget */
  reached(sequence: number): void {
    if (sequence > this.#last) this.#last = sequence;
  }

  /** @internal FollowTarget */
  skipTo(sequence: number): void {
    this.ring!.reset(sequence);
    this.#last = sequence;
  }

  /** @internal FollowTarget */
  goLive(sequence: number): void {
    this.live = true;
    if (sequence > this.watermark) this.watermark = sequence;
    this.#wake();
  }

  #push(event: TidemarkEvent<T>): void {
    if (event.streamSequence <= this.#last) return;
    // An event of another incarnation: the stream was re-created under this follower.
    if (this.cursors && !this.cursors.owns(event.cursor)) return this.fail(recreated(this.topic.id));
    this.#last = event.streamSequence;
    this.ring!.push(event, this.#settings.sizeOf(event));
    recordDelivery(event, this.topic.id, this.members);
    this.#fanOut(event);
    if (event.streamSequence > this.watermark) this.watermark = event.streamSequence;
    // An event is a fresh watermark too: the periodic refresh is for tenants that publish nothing.
    this.#refreshedAt = Date.now();
    this.#wake();
  }

  #wake(): void {
    const tick = this.#tick;
    if (!tick) return;
    this.#tick = undefined;
    tick.resolve();
  }
}
