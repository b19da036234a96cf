/**
 * A topic's feed (hub mode "topic"): ONE whole-topic `follow()` per topic per process that hands
 * each event to the follower of its tenant (a Map tenant -> follower), so the broker holds a
 * consumer per exposed topic, not per online tenant. A whole-topic read sees every sequence, so
 * a jump is a removal the reader reports (`RetentionGapError`; a jump inside the retained window
 * is a damaged replica, which the reader reads around: core/read/reader.ts); the feed then fails
 * exactly the followers whose watermark the removal passed.
 *
 * The feed's position is a watermark for every attached follower: every event up to it was
 * handed out, so an idle tenant's watermark moves there without a broker lookup.
 *
 * The feed keeps its recent events (`backlog.ts`) and extends them backwards on demand with one
 * whole-topic replay shared by every follower that asks meanwhile (`cover`): a storm of tenants
 * resuming a little behind the head costs a read or two, not a replay per tenant.
 */
import { BrokerUnavailableError, ErrorCode, isTidemarkError, RetentionGapError, type TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import type { HeadRead } from "./head.js";
import { failureOf } from "./failure.js";
import type { IncarnationCursors } from "./incarnation.js";
import { BrokerRetry } from "./retry.js";
import { Backlog } from "./backlog.js";
import type { HubStats } from "./stats.js";

/** @internal Bounds of a feed's backlog: `backlogSequences` behind its newest event, and `backlogBytes` by `sizeOf`. */
export interface BacklogSettings {
  backlogSequences: number;
  backlogBytes: number;
  sizeOf: (event: TidemarkEvent) => number;
}

/** @internal What the feed needs of a follower. */
export interface FeedMember<T> {
  readonly tenantId: string | undefined;
  /** Current watermark: a removal at or below it lost the follower nothing. */
  readonly watermark: number;
  deliver(event: TidemarkEvent<T>): void;
  fail(err: unknown): void;
}

/** @internal */
export class TopicFeed<T = unknown> {
  readonly topic: Topic<T>;
  readonly cursors: IncarnationCursors;
  /** Serial of the head read the feed started from (see {@link HeadRead.serial}). */
  readonly startSerial: number;
  /** Every event up to this sequence was handed to the followers attached at that time. */
  position: number;
  /** Called once when the feed stops (its last follower left, or it failed). */
  onEnd: (() => void) | undefined;
  readonly backlog: Backlog<T>;
  readonly #members = new Map<string | undefined, FeedMember<T>>();
  readonly #abort = new AbortController();
  /** The lowest position asked for by `cover` since the last extension started. */
  #wanted: number | undefined;
  #extending: Promise<number | undefined> | undefined;
  /** Holds that keep the feed running without followers (see `hold`). */
  #holds = 0;

  readonly #stats: HubStats;

  constructor(topic: Topic<T>, head: HeadRead, settings: BacklogSettings, stats: HubStats) {
    this.#stats = stats;
    stats.feeds++;
    this.topic = topic;
    this.cursors = head.cursors;
    this.startSerial = head.serial;
    this.position = head.sequence;
    this.backlog = new Backlog<T>(head.sequence, settings.backlogSequences, settings.backlogBytes, settings.sizeOf);
    void this.#run();
  }

  get stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  get size(): number {
    return this.#members.size;
  }

  /** Adds a follower; it gets every event of its tenant above the returned sequence (the seam). */
  attach(member: FeedMember<T>): number {
    this.#members.set(member.tenantId, member);
    return this.position;
  }

  detach(member: FeedMember<T>): void {
    if (this.#members.get(member.tenantId) === member) this.#members.delete(member.tenantId);
    if (this.#members.size === 0 && this.#holds === 0) this.stop();
  }

  /**
   * Keeps the feed running with no follower until the returned release is called (a warmed
   * feed: `HubRegistry.warm`); it then stops if no follower uses it. Idempotent release.
   */
  hold(): () => void {
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0 && this.#members.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    this.onEnd?.();
  }

  /** Ends the feed and every follower on it with `err`. */
  fail(err: unknown): void {
    this.stop();
    for (const member of [...this.#members.values()]) member.fail(err);
    this.#members.clear();
  }

  /**
   * Resolves undefined once the backlog holds every event above `position` — extending it
   * backwards by one whole-topic read of `[lowest position asked, floor]`, shared by every
   * follower asking meanwhile — or with the reason it cannot (further behind than the backlog
   * reaches, the byte bound, retention removed some): the follower then replays its tenant
   * itself, under the registry's catch-up bound, and reports what that finds. Broker trouble that
   * outlasts the retry budget rejects: a replay per follower would meet the same broker.
   */
  async cover(position: number): Promise<string | undefined> {
    while (position < this.backlog.floor) {
      if (this.position - position > this.backlog.maxSequences) return "beyond the backlog";
      // Events put in front would be the first dropped: the read would be wasted.
      if (this.backlog.full) return "over the backlog's byte bound";
      if (this.stopped) return "feed stopped";
      this.#wanted = Math.min(this.#wanted ?? position, position);
      this.#extending ??= this.#extend().finally(() => (this.#extending = undefined));
      const from = await this.#extending;
      if (position >= this.backlog.floor) return undefined;
      if (from === undefined) return "cover read failed";
      // Covered, then dropped again by the byte bound (`full` now says so to the next ones).
      if (from <= position) return "over the backlog's byte bound";
      // Else we asked after this read started: the next one starts from our position.
    }
    return undefined;
  }

  /** Reads `(wanted, floor]` and puts it in front of the backlog; the position it now covers from. */
  async #extend(): Promise<number | undefined> {
    const from = this.#wanted!;
    this.#wanted = undefined;
    const until = this.backlog.floor;
    if (from >= until) return from;
    const events: TidemarkEvent<T>[] = [];
    const signal = this.#abort.signal;
    let last = from;
    const started = Date.now();
    // Resumed from the last event read: one timeout under load must not send every waiting
    // follower to a replay of its own.
    const retry = new BrokerRetry();
    for (;;) {
      try {
        for await (const e of this.topic.replay({ after: this.cursors.at(last), until: this.cursors.at(until), signal })) {
          if (e.streamSequence <= last) continue;
          events.push(e);
          last = e.streamSequence;
          retry.progress();
        }
        break;
      } catch (err) {
        if (this.stopped) return undefined;
        const code = isTidemarkError(err) ? err.code : "unknown";
        // A removal (RetentionGapError) or a re-creation is not retried: the followers' own
        // replays report it.
        const delay = retry.delayFor(err);
        this.#stats.coverFailed(`${code}${delay !== undefined ? " (retried)" : ""}`);
        if (delay !== undefined) await new Promise((r) => setTimeout(r, delay));
        else if (code === ErrorCode.BrokerUnavailable) throw retry.passOn(err);
        else return undefined;
      }
    }
    this.#stats.coverMs += Date.now() - started;
    // The backlog moved meanwhile (trimmed, or a removal): what was read no longer joins it.
    if (this.backlog.floor !== until || this.stopped) {
      this.#stats.coverFailed(this.stopped ? "feed stopped" : "floor moved");
      return undefined;
    }
    this.#stats.coverReads++;
    this.#stats.coverEvents += events.length;
    this.backlog.prepend(events, from);
    return from;
  }

  #dispatch(event: TidemarkEvent<T>): void {
    this.position = event.streamSequence;
    this.backlog.push(event);
    this.#members.get(event.tenantId)?.deliver(event);
    // A hub without a tenant reads the whole topic.
    if (event.tenantId !== undefined) this.#members.get(undefined)?.deliver(event);
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    const retry = new BrokerRetry();
    while (!signal.aborted) {
      try {
        for await (const event of this.topic.follow({ after: this.cursors.at(this.position), signal })) {
          if (event.streamSequence <= this.position) continue;
          this.#dispatch(event);
          retry.progress();
        }
        if (!signal.aborted) throw new BrokerUnavailableError("the hub's topic feed ended unexpectedly");
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof RetentionGapError && err.firstAvailableSequence > this.position + 1) {
          this.#removed(err.firstAvailableSequence);
          continue;
        }
        const delay = retry.delayFor(err);
        if (delay !== undefined) {
          await new Promise((r) => setTimeout(r, delay));
          continue;
        }
        const failure = await failureOf(retry.passOn(err), this.topic as Topic<unknown>, this.cursors.incarnation);
        if (!signal.aborted) this.fail(failure);
        return;
      }
    }
  }

  /**
   * Retention removed sequences up to `first - 1` before the feed read them. A follower whose
   * watermark is below that may have lost events: it ends with the gap (as a per-tenant follower
   * overtaken by retention does). The others lost nothing and read on.
   */
  #removed(first: number): void {
    for (const member of [...this.#members.values()]) {
      if (member.watermark + 1 < first) {
        this.#members.delete(member.tenantId);
        member.fail(
          new RetentionGapError(
            `topic ${JSON.stringify(this.topic.id)}: retention overtook the hub; requested events after sequence ${member.watermark}, the first retained is ${first}`,
            { requestedSequence: member.watermark, firstAvailableSequence: first },
          ),
        );
      }
    }
    this.position = first - 1;
    this.backlog.jump(first);
    if (this.#members.size === 0 && this.#holds === 0) this.stop();
  }
}
