/**
 * replay() and follow(): an ordered consumer filtered on the server, with the gap check that
 * JetStream does not do (an ordered consumer that starts below the retained window silently
 * gets the first retained event).
 *
 * - Whole-topic reads see every sequence, so a jump is a removal by retention when the window
 *   starts past it (one stream-info request per jump). Otherwise the replica the read is on lacks
 *   events the stream still retains (Tidemark never deletes inside the window: a store damaged
 *   while its node was down): the read goes on through a fresh consumer, and fails with
 *   BrokerUnavailableError after SHORT_READ_RETRY_MS without progress — never a silent skip.
 * - Tenant reads skip other tenants' sequences by design. A jump is safe when the retained window
 *   still started at or below the position right after the previous event; one stream-info
 *   request checks a whole batch (removal only moves the front forward, so the earliest jump
 *   in the batch decides). When that window shows deleted sequences inside it (a damaged store
 *   leading the stream), a jump over one of them is read on elsewhere like a whole-topic jump.
 *   On a replicated stream a follower's store may have lost events unseen: the consumer is
 *   placed on the leader if a few creations get it there, otherwise the leader confirms each
 *   jump (confirm-run.ts), also once nats.js has recreated it elsewhere (placement.ts); a short
 *   direct read reads every sequence of its range.
 * - A finite read ends at the head it captured (or `until`), never short of it: a consumer or a
 *   direct get answered by a replica that is behind the leader reports nothing more below it.
 *   So where a pass stops below `last` is settled against the leader (`settled`): a retention
 *   gap is a RetentionGapError; events still there are read by a fresh consumer (placed on
 *   any replica again), until the deadline, then BrokerUnavailableError.
 */
import { backoffCeiling, BrokerUnavailableError, CursorMismatchError, RetentionGapError, type TidemarkEvent } from "@tidemark/shared";
import type { StreamInfo } from "@nats-io/jetstream";
import { BatchedEvents } from "./batched-events.js";
import { consumerPass } from "./consumer-read.js";
import { readDirect, useDirectRead } from "./direct-read.js";
import { confirmTenantRun, leaderNext } from "./confirm-run.js";
import type { TopicRuntime } from "../runtime.js";
import { assertNotPastHead } from "./past-head.js";
import { parseDeclaration } from "../resources/streams.js";
import { TopicNotFoundError } from "@tidemark/shared";
import { sleep } from "../sleep.js";

export interface ReadOptions {
  after?: string;
  until?: string;
  tenantId?: string;
  signal?: AbortSignal;
  /** false: replay (finite); true: follow (stays open). */
  follow: boolean;
}

/** The incarnation recorded in a stream's metadata or description. */
export function incarnationOf(info: StreamInfo): string | undefined {
  return parseDeclaration(info.config)?.incarnation;
}

/** First retained sequence (last + 1 when nothing is retained). */
export function firstRetained(info: StreamInfo): number {
  return info.state.messages === 0 ? info.state.last_seq + 1 : info.state.first_seq;
}

async function window(rt: TopicRuntime): Promise<StreamInfo> {
  const info = await rt.streamInfo();
  if (!info) throw new TopicNotFoundError(`topic ${JSON.stringify(rt.options.id)} no longer exists on the broker`);
  return info;
}

function gap(rt: TopicRuntime, requested: number, first: number, why: string): RetentionGapError {
  return new RetentionGapError(
    `topic ${JSON.stringify(rt.options.id)}: ${why}; requested events after sequence ${requested}, the first retained is ${first}`,
    { requestedSequence: requested, firstAvailableSequence: first },
  );
}

/**
 * A replica the read was placed on holds sequences `next` and later but not those right after
 * `prev`, which retention has not removed: its store lost them (damaged or truncated while its
 * node was down; nats-server does not repair it). Retryable: another replica may hold them.
 */
function missingEvents(rt: TopicRuntime, prev: number, next: number, passes: number): BrokerUnavailableError {
  return new BrokerUnavailableError(
    `topic ${JSON.stringify(rt.options.id)}: the replica serving the read is missing sequences ${prev + 1}-${next - 1}, which the stream still retains ` +
      `(a damaged or incomplete replica; ${passes} reads in ${SHORT_READ_RETRY_MS} ms met it); retry the read from its last event`,
  );
}

/**
 * The window as the stream leader sees it. A replica cut off from its leader answers stream
 * info itself once it takes the group for leaderless (no `cluster.leader`), with its own stale
 * state: a head captured from it would end the read short (seen on 2.9.10 and 2.15.1).
 */
async function leaderWindow(rt: TopicRuntime): Promise<StreamInfo> {
  const deadline = Date.now() + SHORT_READ_RETRY_MS;
  for (let attempt = 0; ; attempt++) {
    const info = await window(rt);
    if ((info.config.num_replicas ?? 1) <= 1 || !info.cluster || info.cluster.leader) return info;
    if (Date.now() >= deadline) {
      throw new BrokerUnavailableError(`topic ${JSON.stringify(rt.options.id)}: the stream has no leader (stream info answered by a replica without one); retry the read`);
    }
    await sleep(backoffCeiling(attempt, PASS_BACKOFF));
  }
}


/** Waits between passes of a read (and looks for a leader) within SHORT_READ_RETRY_MS: 50 ms doubling to 1 s. */
const PASS_BACKOFF = { baseMs: 50, maxMs: 1_000 };

/** How long a finite read keeps reading past a pass that stopped short of its head. */
export const SHORT_READ_RETRY_MS = 5_000;

/** Reads events; see the module comment for the gap and end rules. */
export function readEvents<T>(rt: TopicRuntime, opts: ReadOptions): AsyncIterableIterator<TidemarkEvent<T>, undefined> {
  // The sources yield delivered batches; they are handed out one event per step without an
  // async generator's hop per event (batched-events.ts), which also ends the read on an abort.
  return new BatchedEvents(readBatches<T>(rt, opts), opts.signal);
}

async function* readBatches<T>(rt: TopicRuntime, opts: ReadOptions): AsyncGenerator<readonly TidemarkEvent<T>[]> {
  const { signal } = opts;
  if (signal?.aborted) return;
  let h = await rt.ready();
  // Cursors are checked before any broker work: malformed or foreign ones fail at once.
  const afterParts = opts.after === undefined ? undefined : rt.cursorParts(opts.after);
  const after = afterParts?.sequence;
  const until = opts.until === undefined ? undefined : rt.cursorSequence(opts.until);
  const filter = rt.filterFor(opts.tenantId);
  const tenantFilter = opts.tenantId !== undefined ? filter : undefined;
  if (signal?.aborted) return;

  const info = await leaderWindow(rt);
  // Another process may have destroyed and re-created the topic since this one provisioned it.
  if (incarnationOf(info) !== h.incarnation) h = await rt.refresh();
  const first = firstRetained(info);
  // Sequence 0 too: the old stream's events after it are gone, which is no resume.
  if (afterParts !== undefined && afterParts.incarnation !== "" && afterParts.incarnation !== h.incarnation) {
    throw new CursorMismatchError(
      `topic ${JSON.stringify(rt.options.id)} was destroyed and re-created since this cursor was issued; it does not name a position in the topic that exists now`,
    );
  }
  // Past the head: never issued (past-head.ts), also refused for an empty range. The window
  // read above is the one every read makes, so the check costs no request.
  if (after !== undefined) assertNotPastHead(rt.options.id, after, info.state.last_seq);
  // A finite read ends at the head it captured, also when `until` is past it.
  const last = opts.follow ? Number.POSITIVE_INFINITY : Math.min(until ?? info.state.last_seq, info.state.last_seq);
  // An empty range (until <= after) yields nothing, once the cursors are known to be this stream's.
  if (after !== undefined && (until ?? last) <= after) return;
  if (after !== undefined && first > after + 1) throw gap(rt, after, first, "retention removed events past the cursor");
  const start = after !== undefined ? after + 1 : Math.max(first, 1);
  if (!opts.follow && start > last) return;
  if (signal?.aborted) return;
  // The last window read, for holeWithin: interior deletions in the leader's store.
  let seen: StreamInfo = info;
  const firstNow = async () => firstRetained((seen = await window(rt)));
  // Tidemark never deletes inside the window: num_deleted > 0 is a store that lost events.
  const holey = () => (seen.state.num_deleted ?? 0) > 0;
  const holeWithin = async (from: number, to: number) => {
    if (!holey()) return false;
    const detailed = await h.jsm.streams.info(rt.streamName, { deleted_details: true }).catch((err: unknown) => Promise.reject(rt.mapError(err)));
    return (detailed.state.deleted ?? []).some((q) => q > from && q < to);
  };
  const gapOf = (r: number, f: number, why: string) => gap(rt, r, f, why);
  // A single replica is the stream: what it holds needs no leader to confirm it.
  const single = (info.config.num_replicas ?? 1) <= 1;

  const leader = info.cluster?.leader;
  // A tenant read of a replicated stream has the leader confirm jumps a replica showed it.
  const confirm = tenantFilter !== undefined && !single ? (from: number, seqs: readonly number[]) => confirmTenantRun(rt, h, tenantFilter, from, seqs) : undefined;

  // The leader as it is now, for a consumer nats.js recreated meanwhile (placement.ts).
  const leaderNow = async () => (seen = await window(rt)).cluster?.leader;

  let prev = after;
  if (useDirectRead(h, opts.follow, start, last, info.config.allow_direct, tenantFilter !== undefined && single)) {
    const end = yield* readDirect<T>(rt, h, { start, last, after, tenantFilter, signal, firstRetained: firstNow, holey, holeWithin, gap: gapOf, everySequence: !single });
    // Not even a single replica's answer is the stream's: a mirror with mirror_direct may answer.
    if (end === undefined || (!end.missing && (await settled(end.prev, end.reached, false)))) return;
    prev = end.prev;
  }
  let deadline = Date.now() + SHORT_READ_RETRY_MS;
  // A tenant read prefers a consumer on the leader, until the leader's own store is the one
  // missing events (a damaged node that leads): then any replica, to find a whole one.
  let preferLeader = true;
  for (let attempt = 0; ; attempt++) {
    const pass = { start: prev === undefined ? start : prev + 1, prev, last, follow: opts.follow, tenantFilter, leader, signal, preferLeader };
    // yield* hands a `return()` (a break) on to the pass, which releases its consumer.
    const end = yield* consumerPass<T>(rt, h, { ...pass, firstRetained: firstNow, holey, holeWithin, gap: gapOf, confirm, leaderNow });
    if (end === undefined || signal?.aborted) return;
    if (end.missing) {
      if (end.onLeader) preferLeader = false;
      // The consumer's replica lacks retained events after end.prev: a fresh consumer may be
      // placed on a whole replica. Progress (a follow reading on) starts the deadline again.
      if (end.prev !== prev) deadline = Date.now() + SHORT_READ_RETRY_MS;
      if (Date.now() >= deadline) throw missingEvents(rt, end.prev ?? start - 1, end.missing.next, attempt + 1);
      prev = end.prev;
      await sleep(backoffCeiling(attempt, PASS_BACKOFF));
      continue;
    }
    if (await settled(end.prev, end.prev, !end.idle && (single || end.onLeader))) return;
    // Not settled on a leader that lost events of its own: the rest may be on another replica.
    if (end.onLeader && holey()) preferLeader = false;
    const stoppedAt = end.prev ?? start - 1;
    if (Date.now() >= deadline) {
      throw new BrokerUnavailableError(
        `topic ${JSON.stringify(rt.options.id)}: the replay stopped at sequence ${stoppedAt}, below the head ${last} it captured, ${attempt + 1} times in ${SHORT_READ_RETRY_MS} ms (a replica of the stream is behind its leader); retry the replay from its last event`,
      );
    }
    prev = end.prev;
    await sleep(backoffCeiling(attempt, PASS_BACKOFF));
  }

  /**
   * True when a read that stopped at `prev` has read everything up to `last`: `reached` (the
   * highest sequence the source showed) is there, or the leader has nothing more for the read
   * (`authoritative`: the source was the leader's store). A tail removed by retention is a
   * RetentionGapError.
   */
  async function settled(prev: number | undefined, reached: number | undefined, authoritative: boolean): Promise<boolean> {
    if (reached !== undefined && reached >= last) return true;
    const f = await firstNow();
    if (prev !== undefined && f > prev + 1) throw gap(rt, prev, f, "retention removed events past the cursor");
    if (f > last) return true;
    if (tenantFilter === undefined) return false;
    const from = Math.max(prev === undefined ? start : prev + 1, f);
    // A leader whose own store lost events (deleted sequences inside its window) cannot say the
    // tenant has nothing more in them: read on, through a consumer that may sit on a whole replica.
    if (holey() && (await holeWithin(from - 1, last + 1))) return false;
    if (authoritative) return true;
    // A tenant's read stops below `last` whenever its newest event is older: ask the leader
    // (a direct get may be answered by the replica that is behind).
    return (await leaderNext(rt, h, tenantFilter, from)) > last;
  }
}
