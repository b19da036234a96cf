/**
 * A topic's feed (hub mode "topic"): ONE whole-topic `follow()` per topic per process that hands
 * each event to the follower of its tenant (a Map tenant -> follower), so the broker holds a
 * consumer per exposed topic, not per online tenant. A whole-topic read sees every sequence, so
 * any jump is a removal the reader reports (`RetentionGapError`); the feed then fails exactly
 * the followers whose watermark the removal passed.
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
import { IncarnationCursors } from "./incarnation.js";
import { backoff } from "./limit.js";
import { Backlog } from "./backlog.js";

/** @internal Bounds of a feed's backlog: `maxBackfillSequences` behind its newest event (and 64 MiB by `sizeOf`). */
export interface BacklogSettings {
  maxBackfillSequences: number;
  sizeOf: (event: TidemarkEvent) => number;
}

const BACKLOG_BYTES = 64 * 1024 * 1024;

/** Retries after broker trouble before the followers get the error (~30 s), as for a follower. */
const MAX_RETRIES = 10;

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
  #extending: Promise<boolean> | undefined;

  constructor(topic: Topic<T>, head: HeadRead, settings: BacklogSettings) {
    this.topic = topic;
    this.cursors = new IncarnationCursors(head.cursor, (s) => topic.cursorAt(s));
    this.startSerial = head.serial;
    this.position = head.sequence;
    this.backlog = new Backlog<T>(head.sequence, settings.maxBackfillSequences, BACKLOG_BYTES, settings.sizeOf);
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
    if (this.#members.size === 0) this.stop();
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
   * Resolves true once the backlog holds every event above `position` — extending it backwards
   * by one whole-topic replay, shared by every follower asking meanwhile — or false when it
   * cannot (more than `maxBackfillSequences` behind, retention removed some, broker trouble):
   * the follower then replays its tenant itself, and reports what that finds.
   */
  async cover(position: number): Promise<boolean> {
    while (position < this.backlog.floor) {
      if (this.position - position > this.backlog.maxSequences || this.stopped) return false;
      this.#wanted = Math.min(this.#wanted ?? position, position);
      this.#extending ??= this.#extend().finally(() => (this.#extending = undefined));
      if (!(await this.#extending) && position < this.backlog.floor) return false;
    }
    return true;
  }

  async #extend(): Promise<boolean> {
    const from = this.#wanted!;
    this.#wanted = undefined;
    const until = this.backlog.floor;
    if (from >= until) return true;
    const events: TidemarkEvent<T>[] = [];
    try {
      const signal = this.#abort.signal;
      for await (const e of this.topic.replay({ after: this.cursors.at(from), until: this.cursors.at(until), signal })) events.push(e);
    } catch {
      return false;
    }
    // The backlog moved meanwhile (trimmed, or a removal): what was read no longer joins it.
    if (this.backlog.floor !== until || this.stopped) return false;
    this.backlog.prepend(events, from);
    return true;
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
    let failures = 0;
    while (!signal.aborted) {
      try {
        for await (const event of this.topic.follow({ after: this.cursors.at(this.position), signal })) {
          if (event.streamSequence <= this.position) continue;
          this.#dispatch(event);
          failures = 0;
        }
        if (!signal.aborted) throw new BrokerUnavailableError("the hub's topic feed ended unexpectedly");
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof RetentionGapError && err.firstAvailableSequence > this.position + 1) {
          this.#removed(err.firstAvailableSequence);
          continue;
        }
        if (isTidemarkError(err) && err.code === ErrorCode.BrokerUnavailable && failures < MAX_RETRIES) {
          await backoff(++failures);
          continue;
        }
        const failure = await failureOf(err, this.topic as Topic<unknown>, this.cursors.incarnation);
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
    if (this.#members.size === 0) this.stop();
  }
}
