/**
 * Hub mode "tenant": a follower's own tenant-filtered read — a replay from the start position
 * up to the head read, then a `follow()` — with one JetStream consumer per (topic, tenant).
 */
import { BrokerUnavailableError, ErrorCode, isTidemarkError, RetentionGapError } from "@tidemark/shared";
import type { HeadRead } from "./head.js";
import { incarnationOf, recreated, sameIncarnation } from "./incarnation.js";
import { BrokerRetry } from "./retry.js";
import type { FollowerSource, FollowTarget } from "./source.js";
import type { TopicWindow } from "./window.js";

/** @internal */
export class TenantFollow<T> implements FollowerSource<T> {
  constructor(readonly reach: number) {}

  async run(target: FollowTarget<T>, from: number, head: HeadRead): Promise<void> {
    const { topic, tenantId, signal } = target;
    // Broker trouble (a timeout, a reconnect) is retried here, from the last event pushed, so
    // that it does not fail every subscriber at once and send them all back at the broker.
    const retry = new BrokerRetry();
    let backfilled = from >= head.sequence;
    while (!backfilled && !signal.aborted) {
      try {
        const backlog = topic.replay({ after: target.cursorAt(target.last), until: target.cursorAt(head.sequence), tenantId, signal });
        for await (const event of backlog) {
          target.push(event);
          retry.progress();
        }
        backfilled = true;
      } catch (err) {
        if (signal.aborted) return;
        // The seeding cursor was overtaken by retention: start at the head instead.
        if (isTidemarkError(err) && err.code === ErrorCode.RetentionGap) {
          target.skipTo(head.sequence);
          backfilled = true;
        } else await retry.wait(err);
      }
    }
    if (signal.aborted) return;
    target.goLive(head.sequence);
    while (!signal.aborted) {
      try {
        const after = target.cursorAt(Math.max(target.last, target.watermark));
        for await (const event of topic.follow({ after, tenantId, signal })) {
          target.push(event);
          retry.progress();
        }
        if (!signal.aborted) throw new BrokerUnavailableError("the hub's follower ended unexpectedly");
      } catch (err) {
        if (signal.aborted) return;
        // Retention passed the follow's start, but not the watermark: the tenant had nothing
        // in what was removed (an idle tenant on a busy topic). Follow on from the watermark.
        if (err instanceof RetentionGapError && err.firstAvailableSequence <= target.watermark + 1) continue;
        await retry.wait(err);
      }
    }
  }

  /**
   * The window's head, when the tenant has nothing up to it that was not pushed — the source's
   * rule for idle tenants: its newest retained event is at or below the last one pushed, and
   * retention removed nothing past the current watermark (else an event removed before the
   * follower got it would go unnoticed). One `latestCursor()` per hub, whatever its subscriber
   * count; none when the pushed events are already past the head.
   */
  async idleMark(target: FollowTarget<T>, { head, first }: TopicWindow): Promise<number | undefined> {
    if (target.last >= head) return head;
    if (first !== undefined && first > target.watermark + 1) return undefined;
    const latest = await target.topic.latestCursor({ tenantId: target.tenantId });
    if (latest === undefined) return head;
    if (!sameIncarnation(incarnationOf(latest), target.incarnation)) {
      target.fail(recreated(target.topic.id));
      return undefined;
    }
    return target.topic.cursorSequence(latest) > target.last ? undefined : head;
  }

  stop(): void {}
}
