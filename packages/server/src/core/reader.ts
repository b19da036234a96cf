/**
 * replay() and follow(): an ordered consumer filtered on the server, with the gap check that
 * JetStream does not do (an ordered consumer that starts below the retained window silently
 * gets the first retained event).
 *
 * - Whole-topic reads see every sequence, so any jump is a removal: no broker request needed.
 * - Tenant reads skip other tenants' sequences by design. A jump is safe when the retained window
 *   still started at or below the position right after the previous event; one stream-info
 *   request checks a whole batch (removal only moves the front forward, so the earliest jump
 *   in the batch decides).
 */
import { CursorMismatchError, decodeCursor, RetentionGapError, type TidemarkEvent } from "@tidemark/shared";
import type { ConsumerMessages, JsMsg, StreamInfo } from "@nats-io/jetstream";
import { BatchPump } from "./batch-pump.js";
import { openConsumer } from "./consumer-lease.js";
import { CONSUMER_PROBE_TIMEOUT_MS, watchConsumer, type ConsumerWatch } from "./consumer-watch.js";
import { readDirect, useDirectRead } from "./direct-read.js";
import type { TopicRuntime } from "./runtime.js";
import { parseDeclaration } from "./streams.js";
import { TopicNotFoundError } from "@tidemark/shared";

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

/** Reads events; see the module comment for the gap rules. */
export async function* readEvents<T>(rt: TopicRuntime, opts: ReadOptions): AsyncGenerator<TidemarkEvent<T>> {
  const { signal } = opts;
  if (signal?.aborted) return;
  let h = await rt.ready();
  // Cursors are checked before any broker work: malformed or foreign ones fail at once.
  const after = opts.after === undefined ? undefined : rt.cursorSequence(opts.after);
  const until = opts.until === undefined ? undefined : rt.cursorSequence(opts.until);
  const filter = rt.filterFor(opts.tenantId);
  const filtered = opts.tenantId !== undefined;
  if (signal?.aborted) return;

  let info = await window(rt);
  // Another process may have destroyed and re-created the topic since this one provisioned it.
  if (incarnationOf(info) !== h.incarnation) h = await rt.refresh();
  let first = firstRetained(info);
  if (after !== undefined) {
    const inc = decodeCursor(opts.after).incarnation;
    // Sequence 0 too: the old stream's events after it are gone, which is no resume.
    if (inc !== "" && inc !== h.incarnation) {
      throw new CursorMismatchError(
        `topic ${JSON.stringify(rt.options.id)} was destroyed and re-created since this cursor was issued; it does not name a position in the topic that exists now`,
      );
    }
  }
  const last = opts.follow ? Number.POSITIVE_INFINITY : (until ?? info.state.last_seq);
  // An empty range (until <= after) yields nothing, once the cursors are known to be this stream's.
  if (after !== undefined && last <= after) return;
  if (after !== undefined && first > after + 1) throw gap(rt, after, first, "retention removed events past the cursor");
  const start = after !== undefined ? after + 1 : Math.max(first, 1);
  if (!opts.follow && start > last) return;
  if (signal?.aborted) return;
  if (useDirectRead(h, opts.follow, start, last, info.config.allow_direct)) {
    const firstNow = async () => firstRetained(await window(rt));
    const tenantFilter = filtered ? filter : undefined;
    yield* readDirect<T>(rt, h, { start, last, after, tenantFilter, signal, firstRetained: firstNow, gap: (r, f, why) => gap(rt, r, f, why) });
    return;
  }

  // The consumer is released on an abort at any point: the lease deletes it once it exists,
  // even when the abort came while it was being created. A replay's consumer state is
  // throwaway: kept in memory, not in the file store, where a server with sync_interval always
  // (the embedded default on 2.10+) fsyncs its updates. A follow()'s stays on file: it must
  // outlive a broker restart (a memory consumer does not).
  const from = { opt_start_seq: start, mem_storage: !opts.follow } as { opt_start_seq: number };
  const lease = await openConsumer(rt, h, filtered ? { filter_subjects: filter, ...from } : from);
  let messages: ConsumerMessages | undefined;
  let watch: ConsumerWatch | undefined;
  const onAbort = () => messages?.stop();
  signal?.addEventListener("abort", onAbort, { once: true });
  // `prev` is the position the reader has reached: the cursor, then each yielded event.
  let prev = after;
  try {
    if (signal?.aborted) return;
    const pendingAtStart = (await lease.consumer.info(true)).num_pending;
    messages = await lease.consumer.consume();
    watch = watchConsumer(lease.consumer, messages, {
      timeoutMs: Math.min(rt.requestTimeoutMs, CONSUMER_PROBE_TIMEOUT_MS),
      connection: () => rt.connectionState(),
    });
    if (signal?.aborted) return;
    if (!opts.follow && pendingAtStart === 0) {
      await finalCheck();
      return;
    }
    const pump = new BatchPump<JsMsg>(messages);
    for (;;) {
      const batch = await pump.next();
      if (batch === undefined || signal?.aborted) return;
      watch.activity();
      let checked = false;
      let p = prev;
      for (const m of batch) {
        if (p !== undefined && m.seq !== p + 1 && filtered && m.seq > p) {
          checked = true;
          break;
        }
        p = m.seq;
      }
      if (checked) {
        info = await window(rt);
        first = firstRetained(info);
      }
      for (const m of batch) {
        if (m.seq > last) return;
        if (prev !== undefined) {
          if (m.seq <= prev) throw gap(rt, prev, m.seq, "the topic was destroyed and re-created while reading");
          if (m.seq !== prev + 1 && (!filtered || first > prev + 1)) {
            throw gap(rt, prev, filtered ? first : m.seq, "retention overtook the reader");
          }
        }
        prev = m.seq;
        yield rt.toEvent<T>(m);
        if (signal?.aborted) return;
        if (!opts.follow && (m.seq >= last || m.info.pending === 0)) {
          if (m.seq < last) await finalCheck();
          return;
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    watch?.stop();
    // close() resolves only once an iterator drains the stop marker: stop without waiting.
    messages?.stop();
    await lease.release();
  }

  // A finite read that ends below `last` must not have lost the tail to retention.
  async function finalCheck(): Promise<void> {
    if (prev === undefined) return;
    const now = await window(rt);
    const f = firstRetained(now);
    if (f > prev + 1 && prev < last) throw gap(rt, prev, f, "retention removed events past the cursor");
  }
}
