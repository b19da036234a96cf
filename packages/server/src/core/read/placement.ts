/**
 * @internal Where a read's ordered consumer sits, per consumer name. nats.js recreates an ordered
 * consumer by itself (missed heartbeats, a sequence gap, a reconnect, consumer-watch.ts's probe)
 * under the next name, placed on whichever replica the cluster picks. A tenant read that started
 * on the stream leader needs no confirmation of its jumps; after a recreation it may sit on a
 * replica whose store lost events (issue 29: a follow 388 events short, no gap reported). So the
 * messages' consumer name (in their reply subject) is compared with the names already placed,
 * and a new one is looked up together with the stream leader as it is now.
 */
import type { JsMsg } from "@nats-io/jetstream";
import type { TopicHandles, TopicRuntime } from "../runtime.js";

export interface ConsumerPlacement {
  /** The first consumer ran on the stream leader. */
  readonly onLeader: boolean;
  /**
   * Every message of `batch` came from a consumer on the stream leader's server. A consumer
   * that cannot be looked up (gone already: recreated again) counts as off the leader, which
   * costs confirmations, never a hole.
   */
  of(batch: readonly JsMsg[]): Promise<boolean>;
}

export function consumerPlacement(
  rt: TopicRuntime,
  h: TopicHandles,
  o: { leader: string | undefined; leaderNow?(): Promise<string | undefined> },
  firstName: string,
  firstOnLeader: boolean,
): ConsumerPlacement {
  const known = new Map<string, boolean>([[firstName, firstOnLeader]]);
  let leader = o.leader;
  // One batch's messages come from one consumer, or from one and then its successor: a
  // recreation moves the delivery subject, so the old consumer's messages stop for good.
  const lookUp = async (name: string): Promise<boolean> => {
    const seen = known.get(name);
    if (seen !== undefined) return seen;
    leader = o.leaderNow ? await o.leaderNow().catch(() => leader) : leader;
    const where = await h.jsm.consumers.info(rt.streamName, name).then(
      (ci) => ci.cluster?.leader,
      () => undefined,
    );
    const on = leader !== undefined && where !== undefined && where === leader;
    known.set(name, on);
    return on;
  };
  let current = firstOnLeader;
  return {
    onLeader: firstOnLeader,
    async of(batch) {
      if (batch.length === 0) return current;
      const first = batch[0]!.info.consumer;
      const last = batch[batch.length - 1]!.info.consumer;
      const a = await lookUp(first);
      current = first === last ? a : a && (await lookUp(last));
      return current;
    },
  };
}
