/**
 * Hub mode "topic": a follower reads its tenant's events from the topic's shared feed (feed.ts,
 * one whole-topic consumer per topic per process). It joins the feed, replays the tenant from
 * the start position up to the feed's position at the join (the seam) while the feed's newer
 * events wait in a buffer, then pushes those. The follower drops what is at or below its last
 * pushed sequence, so the seam has no hole and no duplicate.
 */
import { ErrorCode, isTidemarkError, type TidemarkEvent } from "@tidemark/shared";
import type { HeadRead } from "./head.js";
import { recreated } from "./incarnation.js";
import { BrokerRetry } from "./retry.js";
import type { FeedMember, TopicFeed } from "./feed.js";
import type { FeedLink } from "./settings.js";
import type { FollowerSource, FollowTarget } from "./source.js";

/** @internal */
export class FeedFollow<T> implements FollowerSource<T> {
  readonly #link: FeedLink;
  #feed: TopicFeed<T> | undefined;
  #member: FeedMember<T> | undefined;
  /** Events the feed handed over while the backfill below the seam runs. */
  #buffer: TidemarkEvent<T>[] | undefined;

  constructor(link: FeedLink, readonly reach: number) {
    this.#link = link;
  }

  async run(target: FollowTarget<T>, from: number, head: HeadRead): Promise<void> {
    const link = this.#link;
    const { topic, tenantId } = target;
    const feed = link.feedFor(topic, head);
    if (!feed) throw recreated(topic.id);
    this.#feed = feed;
    this.#buffer = [];
    const member = new Member(this, target);
    this.#member = member;
    const seam = feed.attach(member);
    // Served from the feed's recent events when it holds (or can read, once for every tenant
    // asking) everything above our position; else a replay of our own, below.
    if (target.last < seam) {
      const why = await feed.cover(target.last);
      const events = why === undefined && !target.retired ? feed.backlog.slice(tenantId, target.last, seam) : undefined;
      if (events) {
        for (const event of events) target.push(event);
        target.reached(seam);
        link.stats.covered++;
      } else if (!target.retired) link.stats.fellBack(why ?? "trimmed after the cover");
    }
    const retry = new BrokerRetry();
    while (target.last < seam && !target.retired) {
      const release = await link.limiter.acquire();
      try {
        if (target.retired) return;
        const backlog = topic.replay({ after: target.cursorAt(target.last), until: target.cursorAt(seam), tenantId, signal: target.signal });
        for await (const event of backlog) {
          target.push(event);
          retry.progress();
        }
        target.reached(seam);
      } catch (err) {
        if (target.retired) return;
        // As in mode "tenant": subscribers below the seam fall back to their own replay and gap.
        if (isTidemarkError(err) && err.code === ErrorCode.RetentionGap) target.skipTo(seam);
        else await retry.wait(err);
      } finally {
        release();
      }
    }
    if (target.retired) return;
    const buffered = this.#buffer ?? [];
    this.#buffer = undefined;
    for (const event of buffered) target.push(event);
    target.goLive(seam);
    link.stats.caughtUp();
  }

  /** @internal An event the feed hands over: held while the backfill runs, then pushed. */
  handed(event: TidemarkEvent<T>, target: FollowTarget<T>): void {
    if (this.#buffer) this.#buffer.push(event);
    else if (target.live) target.push(event);
  }

  /** The feed handed over every event up to its position: no lookup needed. */
  async idleMark(): Promise<number | undefined> {
    return this.#feed?.position;
  }

  stop(): void {
    if (this.#feed && this.#member) this.#feed.detach(this.#member);
    this.#buffer = undefined;
  }
}

/**
 * A follower as its feed sees it. A class, not an object literal: with a tenant per user there
 * is one per connection, and a literal with a getter and two closures held ~600 bytes of
 * dictionary properties and closure contexts (heap snapshot of 3,000 idle connections).
 */
class Member<T> implements FeedMember<T> {
  readonly tenantId: string | undefined;
  readonly #follow: FeedFollow<T>;
  readonly #target: FollowTarget<T>;

  constructor(follow: FeedFollow<T>, target: FollowTarget<T>) {
    this.tenantId = target.tenantId;
    this.#follow = follow;
    this.#target = target;
  }

  get watermark(): number {
    return this.#target.watermark;
  }

  deliver(event: TidemarkEvent<T>): void {
    this.#follow.handed(event, this.#target);
  }

  fail(err: unknown): void {
    this.#target.fail(err);
  }
}
