/**
 * Replays of a few events without a consumer, on streams with `allow_direct` (every event
 * stream Tidemark makes): on nats-server 2.11+ one batched direct get (`batch` and
 * `next_by_subj`) for up to 64 sequences; on older servers (2.9, 2.10: direct get, no batch) one
 * direct get per sequence, sent together, for up to 16. Either replaces creating, reading and
 * deleting an ordered consumer (four round trips) by one. The gap rules are the reader's
 * (reader.ts): a whole-topic read sees every sequence, so a jump is a removal; a tenant read's
 * jump is a gap only when the retained window moved past the position, checked once for the
 * whole batch. Any replica may answer a direct get, one that is behind too: a read that ends
 * below its last sequence is settled by the reader (reader.ts), not taken as the end.
 */
import type { StoredMsg } from "@nats-io/jetstream";
import type { RetentionGapError, TidemarkEvent } from "@tidemark/shared";
import type { TopicHandles, TopicRuntime } from "../runtime.js";
import { isDirectGetEmpty } from "../errors.js";

/** Longest sequence range a replay reads with one batched get (2.11+); longer ones use an ordered consumer. */
export const DIRECT_READ_MAX = 64;
/**
 * Bytes one batched get returns at most: its answer is held whole before the reader hands it
 * on, where a consumer's flow control would hold the rest back (a paused subscriber of large
 * events, docs/bridge.md "Backpressure and memory"). A read it cuts short goes on as one that
 * stopped below its last sequence (reader.ts).
 */
export const DIRECT_READ_MAX_BYTES = 256 * 1024;
/** Longest range read with one direct get per sequence (servers without batched get). */
export const DIRECT_SINGLE_MAX = 16;

export interface DirectRead {
  /** First and last sequence to read (inclusive); `after` is the cursor's sequence. */
  start: number;
  last: number;
  after: number | undefined;
  /** The tenant's subject, or undefined for a whole-topic read. */
  tenantFilter: string | undefined;
  signal?: AbortSignal;
  /** The first retained sequence, read now. */
  firstRetained(): Promise<number>;
  /** Did the last window read show deleted sequences inside the window (no request)? */
  holey(): boolean;
  /** Are sequences in (from, to) deleted inside the window (a damaged store; after firstRetained)? */
  holeWithin(from: number, to: number): Promise<boolean>;
  gap(requested: number, first: number, why: string): RetentionGapError;
  /** A tenant read of a replicated stream: read every sequence of the range, keep the tenant's. */
  everySequence?: boolean;
}

/**
 * True when a finite replay of [start, last] on a stream with `allow_direct` reads with direct
 * gets. `sparse`: a tenant read of a single-replica stream, which on 2.11+ starts with one
 * batched get of the tenant's next DIRECT_READ_MAX events (`next_by_subj`) however long its
 * range: a tenant with few events in a long range (a user's inbox resuming after a minute of
 * other users' events) is read without a consumer; one with more goes on with a consumer from
 * the last event that get returned (reader.ts settles where it stopped).
 */
export function useDirectRead(h: TopicHandles, follow: boolean, start: number, last: number, allowDirect: boolean | undefined, sparse = false): boolean {
  if (follow || allowDirect !== true) return false;
  if (sparse && h.batchDirectGet === true) return true;
  return last - start + 1 <= (h.batchDirectGet === true ? DIRECT_READ_MAX : DIRECT_SINGLE_MAX);
}

/**
 * One get per sequence, sent together. Each may be answered by a different replica, one of
 * them behind: only the run without a hole from the first message found is taken (a missing
 * sequence before it was removed, or the read fails the window check). `reached` is the last
 * sequence of that run, of any tenant.
 */
async function fetchEach(rt: TopicRuntime, h: TopicHandles, r: DirectRead): Promise<Fetched> {
  const gets: Promise<StoredMsg | null>[] = [];
  for (let seq = r.start; seq <= r.last; seq++) gets.push(h.jsm.direct.getMessage(rt.streamName, { seq }));
  let answers: (StoredMsg | null)[];
  try {
    answers = await Promise.all(gets);
  } catch (err) {
    throw rt.mapError(err);
  }
  const msgs: StoredMsg[] = [];
  let reached: number | undefined;
  for (const m of answers) {
    if (m === null) {
      if (reached !== undefined) break;
      continue;
    }
    reached = m.seq;
    // The same messages a batched get with next_by_subj returns: this tenant's, in order.
    if (r.tenantFilter === undefined || m.subject === r.tenantFilter) msgs.push(m);
  }
  return { msgs, reached };
}

interface Fetched {
  msgs: StoredMsg[];
  /** The highest sequence the answer shows the store holds (undefined: none shown). */
  reached: number | undefined;
}

async function fetch(rt: TopicRuntime, h: TopicHandles, r: DirectRead, every: boolean): Promise<Fetched> {
  if (h.batchDirectGet !== true) return fetchEach(rt, h, r);
  const out: StoredMsg[] = [];
  const done = (): Fetched => ({ msgs: out, reached: out.at(-1)?.seq });
  try {
    // A tenant's next events by subject (at most DIRECT_READ_MAX of them), or every sequence of
    // a short range.
    const batch = Math.min(r.last - r.start + 1, DIRECT_READ_MAX);
    const it = await h.jsm.direct.getBatch(rt.streamName, { seq: r.start, batch, max_bytes: DIRECT_READ_MAX_BYTES, ...(r.tenantFilter && !every ? { next_by_subj: r.tenantFilter } : {}) });
    for await (const m of it) if (m.seq <= r.last) out.push(m);
  } catch (err) {
    // Nothing at or after `start` (for this tenant): an empty read, not an error.
    if (isDirectGetEmpty(err)) return done();
    throw rt.mapError(err);
  }
  return done();
}

/** Where a direct read stopped; the caller settles whether that is the end (reader.ts). */
export interface DirectEnd {
  prev: number | undefined;
  reached: number | undefined;
  /** The replica that answered skipped retained sequences after `prev` (see consumer-read.ts). */
  missing?: { next: number };
}

export async function* readDirect<T>(rt: TopicRuntime, h: TopicHandles, r: DirectRead): AsyncGenerator<TidemarkEvent<T>[], DirectEnd | undefined> {
  const filtered = r.tenantFilter !== undefined;
  // A tenant read of a replicated stream reads every sequence of its (short) range and keeps
  // its tenant's: a batched get with next_by_subj, answered by a replica that lost sequences,
  // would skip them unseen. Then a jump is a whole-topic jump. One get per sequence (older
  // servers) needs none of it: a replica lacking one answers "no message", ending the run there.
  const every = !filtered || (h.batchDirectGet === true && r.everySequence === true);
  const { msgs, reached } = await fetch(rt, h, r, every);
  // A tenant read skips other tenants' sequences: one window check covers every jump of the
  // batch (removal only moves the front forward, so the earliest jump decides).
  let jumped = false;
  for (let p = r.after, i = 0; i < msgs.length; p = msgs[i]!.seq, i++) if (p !== undefined && msgs[i]!.seq !== p + 1) jumped = true;
  const first = jumped ? await r.firstRetained() : undefined;
  let prev = r.after;
  let missing: DirectEnd["missing"];
  // One batch; the events before a gap or an undecodable message are yielded before it is thrown.
  const events: TidemarkEvent<T>[] = [];
  let failed = false;
  let failure: unknown;
  try {
    for (const m of msgs) {
      if (prev !== undefined && m.seq !== prev + 1 && first! > prev + 1) {
        throw r.gap(prev, first!, "retention overtook the reader");
      }
      // A whole-topic read's jump inside the retained window: the answering replica lacks
      // events the stream still has (consumer-read.ts). Stop here; the reader reads on.
      if (prev !== undefined && m.seq !== prev + 1 && (every || (r.holey() && (await r.holeWithin(prev, m.seq))))) {
        missing = { next: m.seq };
        break;
      }
      prev = m.seq;
      if (!filtered || m.subject === r.tenantFilter) events.push(rt.toEvent<T>(m));
    }
  } catch (err) {
    failed = true;
    failure = err;
  }
  if (events.length > 0) yield events;
  if (failed) throw failure;
  if (r.signal?.aborted) return undefined;
  return missing ? { prev, reached: undefined, missing } : { prev, reached };
}
