/**
 * @internal One pass of a read through an ordered consumer, from `start`: yields events, a
 * delivered batch at a time (one async hop per batch; the reader hands them out one by one),
 * with the gap checks of reader.ts, and returns where it stopped. A finite pass stops when the
 * consumer reports nothing pending or passes `last`; the consumer's replica may be behind the
 * stream leader, so whether that is the end is for the caller to settle (reader.ts).
 */
import type { TidemarkEvent } from "@tidemark/shared";
import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { openConsumer } from "./consumer-lease.js";
import { CONSUMER_PROBE_TIMEOUT_MS, watchConsumer, type ConsumerWatch } from "./consumer-watch.js";
import { decodeDelivered } from "./decode-delivered.js";
import { MessageBatches } from "./message-batches.js";
import { consumerPlacement } from "./placement.js";
import type { TopicHandles, TopicRuntime } from "../runtime.js";
import type { RetentionGapError } from "@tidemark/shared";

export interface ConsumerPass {
  start: number;
  /** The position already reached (the cursor, or the last event of an earlier pass). */
  prev: number | undefined;
  last: number;
  follow: boolean;
  /** The tenant's subject, or undefined for a whole-topic read. */
  tenantFilter: string | undefined;
  /** The stream leader's server name when the read started (undefined: not known). */
  leader: string | undefined;
  signal?: AbortSignal;
  /** The first retained sequence, read now. */
  firstRetained(): Promise<number>;
  /** Did the last window read show deleted sequences inside the window (no request)? */
  holey(): boolean;
  /** Are sequences in (from, to) deleted inside the window (a damaged store; after firstRetained)? */
  holeWithin(from: number, to: number): Promise<boolean>;
  gap(requested: number, first: number, why: string): RetentionGapError;
  /**
   * A tenant read of a replicated stream: has the leader an event of the tenant that a run of
   * the consumer's skipped (confirm-run.ts)? Asked only when the consumer is not on the leader.
   */
  confirm?(from: number, seqs: readonly number[]): Promise<number>;
  /** Recreate a tenant read's consumer (PLACEMENT_TRIES) to place it on the leader. */
  preferLeader?: boolean;
  /** The stream leader's server name now (a stream-info request); asked when the consumer was recreated. */
  leaderNow?(): Promise<string | undefined>;
}

export interface PassEnd {
  /** The last event yielded (or the `prev` passed in). */
  prev: number | undefined;
  /** The consumer ran on the stream leader's server: what it held is the stream. */
  onLeader: boolean;
  /**
   * The consumer's replica skipped sequences after `prev` (up to `next`) that the stream still
   * retains: a damaged or incomplete replica (issue 29). The pass ended at `prev`; the reader
   * reads on through a fresh consumer.
   */
  missing?: { next: number };
  /** The pass gave up on a consumer that was alive but sent nothing: not authoritative. */
  idle?: boolean;
}

/** Creations of a tenant read's consumer, at most, to place it on the stream leader (R1 lands on 1 of N replicas). */
export const PLACEMENT_TRIES = 6;

/**
 * Reads one pass; undefined when aborted (or a follow's consumer ended). The events before a
 * failure (a gap, a message that is not an event) are yielded before it is thrown.
 */
export async function* consumerPass<T>(rt: TopicRuntime, h: TopicHandles, o: ConsumerPass): AsyncGenerator<TidemarkEvent<T>[], PassEnd | undefined> {
  const { signal } = o;
  const filtered = o.tenantFilter !== undefined;
  // The consumer is released on an abort at any point: the lease deletes it once it exists,
  // even when the abort came while it was being created. A replay's consumer state is
  // throwaway: kept in memory, not in the file store, where a server with sync_interval always
  // (the embedded default on 2.10+) fsyncs its updates. A follow()'s stays on file: it must
  // outlive a broker restart (a memory consumer does not).
  const from = { opt_start_seq: o.start, mem_storage: !o.follow } as { opt_start_seq: number };
  const config = filtered ? { filter_subjects: o.tenantFilter, ...from } : from;
  let lease = await openConsumer(rt, h, config);
  let messages: ConsumerMessages | undefined;
  let batches: MessageBatches<JsMsg> | undefined;
  let watch: ConsumerWatch | undefined;
  const onAbort = () => messages?.stop();
  signal?.addEventListener("abort", onAbort, { once: true });
  let prev = o.prev;
  let first: number | undefined;
  const decode = decodeDelivered<T>({ namespace: rt.namespace, topic: rt.options.id, incarnation: h.incarnation });
  try {
    if (signal?.aborted) return undefined;
    let ci = await lease.consumer.info(true);
    // nats-server places an R1 consumer on a random replica. Off the leader, a tenant read has
    // the leader confirm every jump (one get per event); a few more creations to land on the
    // leader cost less (each about a request's time). The last one stays where it lands.
    for (let tries = 1; o.preferLeader && o.confirm && filtered && o.leader !== undefined && ci.cluster?.leader !== o.leader && tries < PLACEMENT_TRIES; tries++) {
      void lease.release();
      if (signal?.aborted) return undefined;
      lease = await openConsumer(rt, h, config);
      ci = await lease.consumer.info(true);
    }
    // nats.js recreates an ordered consumer on its own (missed heartbeats, a sequence gap, a
    // reconnect, our probe), under a new name and on whichever replica the cluster picks, which
    // may be one whose store lost events: where the consumer sits is known per consumer name,
    // and a batch from a consumer not yet seen has its placement looked up (placement.ts).
    const placement = consumerPlacement(rt, h, o, ci.name, o.leader !== undefined && ci.cluster?.leader === o.leader);
    let onLeader = placement.onLeader;
    let idle = false;
    let waiting = false;
    const end = (): PassEnd => ({ prev, onLeader, ...(idle ? { idle } : {}) });
    messages = await lease.consumer.consume();
    // Made at once, so that every way out closes it: a stop marker nobody takes left the
    // subscription on the connection (a replay with nothing pending leaked one each).
    batches = new MessageBatches<JsMsg>(messages);
    // A finite pass whose consumer is alive but silent gives up (idle): seen on a replica whose
    // store was damaged while its node was down (issue 29), a tenant replay got 239 of 242
    // events and then nothing while its consumer stayed alive. The reader settles where it
    // stopped against the leader and reads on through a fresh consumer. Idle counts only while
    // the read waits for the consumer, never while the application holds a batch.
    const m = messages;
    watch = watchConsumer(lease.consumer, messages, {
      timeoutMs: Math.min(rt.requestTimeoutMs, CONSUMER_PROBE_TIMEOUT_MS),
      connection: () => rt.connectionState(),
      onIdle: o.follow
        ? undefined
        : () => {
            if (!waiting) return;
            idle = true;
            m.stop();
          },
    });
    if (signal?.aborted) return undefined;
    if (!o.follow && ci.num_pending === 0) return end();
    for (;;) {
      waiting = true;
      watch.activity();
      const batch = await batches.next();
      waiting = false;
      if (signal?.aborted) return undefined;
      if (batch === undefined) return o.follow ? undefined : end();
      watch.activity();
      if (filtered && o.confirm) {
        onLeader = await placement.of(batch);
        if (signal?.aborted) return undefined;
      }
      // A tenant read's jumps are checked against the window once per batch (a whole-topic
      // read's jump is a removal: nothing to ask).
      if (filtered) {
        let p = prev;
        for (const m of batch) {
          const seq = m.seq;
          if (p !== undefined && seq !== p + 1 && seq > p) {
            first = await o.firstRetained();
            break;
          }
          p = seq;
        }
      }
      // Off the leader, a tenant read's jumps are confirmed by the leader, a batch at a time:
      // the replica may have lost sequences (issue 29), which must not be skipped silently.
      let contradicted = -1;
      if (filtered && !onLeader && o.confirm) {
        const seqs: number[] = [];
        for (const m of batch) {
          if (m.seq > o.last) break;
          seqs.push(m.seq);
        }
        contradicted = await o.confirm(prev ?? o.start - 1, seqs);
        if (signal?.aborted) return undefined;
      }
      const events: TidemarkEvent<T>[] = [];
      let stop = false;
      let failure: unknown;
      let missing: PassEnd["missing"];
      for (let i = 0; i < batch.length; i++) {
        const m = batch[i]!;
        // Read once: `seq` and `info` are getters over the parsed reply subject.
        const info = m.info;
        const seq = info.streamSequence;
        if (seq > o.last) {
          stop = true;
          break;
        }
        if (i === contradicted) {
          missing = { next: seq };
          stop = true;
          break;
        }
        try {
          if (prev !== undefined) {
            if (seq <= prev) throw o.gap(prev, seq, "the topic was destroyed and re-created while reading");
            // A whole-topic read sees every retained sequence: a jump is a removal by retention
            // only when the window starts past it. Tidemark never deletes inside the window, so
            // otherwise the consumer's replica is missing events the stream still has (a store
            // damaged while its node was down): never skipped silently, read on elsewhere. A
            // tenant read cannot tell its jumps from other tenants' events: off the leader, the
            // leader confirms them (above); on a leader whose window shows deleted sequences, a
            // jump over one of them is read on elsewhere.
            if (seq !== prev + 1 && !filtered) first = await o.firstRetained();
            if (seq !== prev + 1 && first! > prev + 1) throw o.gap(prev, first!, "retention overtook the reader");
            if (seq !== prev + 1 && (!filtered || (o.holey() && onLeader && (await o.holeWithin(prev, seq))))) {
              missing = { next: seq };
              stop = true;
              break;
            }
          }
          events.push(decode(m, seq));
        } catch (err) {
          failure = err;
          break;
        }
        prev = seq;
        if (!o.follow && (seq >= o.last || info.pending === 0)) {
          stop = true;
          break;
        }
      }
      if (events.length > 0) yield events;
      if (failure !== undefined) throw failure;
      if (signal?.aborted) return undefined;
      if (missing) return { ...end(), prev, missing };
      if (stop) return end();
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    watch?.stop();
    // Stops the messages without waiting (their close() resolves only once the stop marker is
    // taken); the marker then runs at once and the subscription goes.
    if (batches) batches.close();
    else messages?.stop();
    await lease.release();
  }
}
