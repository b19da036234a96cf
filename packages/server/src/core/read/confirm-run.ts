/**
 * @internal A tenant read through a replica that does not lead the stream cannot tell its jumps
 * over other tenants' sequences from sequences that replica lost (a store damaged while its node
 * was down: nats-server does not repair it, and its answers look whole). The stream leader
 * confirms each jump: one plain message get (`next_by_subj` from the position after the previous
 * event), all of a batch sent together. Direct gets would not do: any replica answers them.
 */
import type { MsgRequest } from "@nats-io/jetstream";
import { isNoMessageFound } from "../errors.js";
import type { TopicHandles, TopicRuntime } from "../runtime.js";

/**
 * The index in `seqs` of the first event before which the leader holds an earlier event of
 * `subject` after `from` (the replica skipped it), or -1 when the leader agrees with every jump.
 * `from` is the position the run starts after (the cursor, the previous event, or start - 1).
 */
export async function confirmTenantRun(rt: TopicRuntime, h: TopicHandles, subject: string, from: number, seqs: readonly number[]): Promise<number> {
  const answers = seqs.map((seq, i) => {
    const p = i === 0 ? from : seqs[i - 1]!;
    return seq === p + 1 ? seq : leaderNext(rt, h, subject, p + 1);
  });
  const seen = await Promise.all(answers);
  return seen.findIndex((q, i) => q < seqs[i]!);
}

/**
 * The sequence of the stream leader's next event of `subject` at or after `from`, or Infinity
 * when it holds none (a plain message get: direct gets may be answered by any replica).
 */
export async function leaderNext(rt: TopicRuntime, h: TopicHandles, subject: string, from: number): Promise<number> {
  // STREAM.MSG.GET takes next_by_subj (nats-server 2.9+); nats.js types only seq/last_by_subj.
  const query = { seq: from, next_by_subj: subject } as unknown as MsgRequest;
  try {
    return (await h.jsm.streams.getMessage(rt.streamName, query))?.seq ?? Number.POSITIVE_INFINITY;
  } catch (err) {
    if (isNoMessageFound(err)) return Number.POSITIVE_INFINITY;
    throw rt.mapError(err);
  }
}
