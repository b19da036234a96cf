/**
 * Replays of a few events on nats-server 2.11+: one batched direct get (`batch` and
 * `next_by_subj` on the stream's direct get API) instead of creating, reading and deleting an
 * ordered consumer. The gap rules are the reader's (reader.ts): a whole-topic read sees every
 * sequence, so a jump is a removal; a tenant read's jump is a gap only when the retained window
 * moved past the position, checked once for the whole batch.
 */
import type { StoredMsg } from "@nats-io/jetstream";
import type { RetentionGapError, TidemarkEvent } from "@tidemark/shared";
import type { TopicHandles, TopicRuntime } from "./runtime.js";
import { isDirectGetEmpty } from "./errors.js";

/** Longest sequence range a replay reads this way; longer ones use an ordered consumer. */
export const DIRECT_READ_MAX = 64;

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
  gap(requested: number, first: number, why: string): RetentionGapError;
}

/** True when a finite replay of [start, last] takes one batched direct get. */
export function useDirectRead(h: TopicHandles, follow: boolean, start: number, last: number): boolean {
  return !follow && h.batchDirectGet === true && last - start + 1 <= DIRECT_READ_MAX;
}

async function fetch(rt: TopicRuntime, h: TopicHandles, r: DirectRead): Promise<StoredMsg[]> {
  const out: StoredMsg[] = [];
  try {
    const batch = r.last - r.start + 1;
    const it = await h.jsm.direct.getBatch(rt.streamName, { seq: r.start, batch, ...(r.tenantFilter ? { next_by_subj: r.tenantFilter } : {}) });
    for await (const m of it) if (m.seq <= r.last) out.push(m);
  } catch (err) {
    // Nothing at or after `start` (for this tenant): an empty read, not an error.
    if (isDirectGetEmpty(err)) return out;
    throw rt.mapError(err);
  }
  return out;
}

export async function* readDirect<T>(rt: TopicRuntime, h: TopicHandles, r: DirectRead): AsyncGenerator<TidemarkEvent<T>> {
  const msgs = await fetch(rt, h, r);
  const filtered = r.tenantFilter !== undefined;
  // A tenant read skips other tenants' sequences: one window check covers every jump of the
  // batch (removal only moves the front forward, so the earliest jump decides).
  let jumped = false;
  for (let p = r.after, i = 0; i < msgs.length; p = msgs[i]!.seq, i++) if (p !== undefined && msgs[i]!.seq !== p + 1) jumped = true;
  const first = filtered && jumped ? await r.firstRetained() : undefined;
  let prev = r.after;
  for (const m of msgs) {
    if (prev !== undefined && m.seq !== prev + 1 && (!filtered || first! > prev + 1)) {
      throw r.gap(prev, filtered ? first! : m.seq, "retention overtook the reader");
    }
    prev = m.seq;
    yield rt.toEvent<T>(m);
    if (r.signal?.aborted) return;
  }
  // A read that ends below `last` must not have lost the tail to retention.
  if (prev !== undefined && prev < r.last) {
    const f = await r.firstRetained();
    if (f > prev + 1) throw r.gap(prev, f, "retention removed events past the cursor");
  }
}
