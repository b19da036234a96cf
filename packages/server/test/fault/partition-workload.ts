/**
 * The workload and accounting of the network fault suites (issue #17). Unlike the fixture's
 * retrying Publisher, each event is ONE `publish()` call (with or without an idempotency key)
 * and the test never retries: a failed call is recorded with its error and `maybeStored`, and
 * the stream itself, read back at the end, says what was really stored. A `process()` worker
 * counts handler runs per event; the WebSocket subscribers' sequences are compared with the
 * stream's, tenant by tenant.
 */
import { BrokerUnavailableError } from "@tidemark/shared";
import type { Topic, Worker } from "../../src/index.js";
import type { ResumingSubscriber } from "./subscriber.js";

export type FaultEvent = { n: number; p: string; pad?: string };

export interface Call {
  id: string;
  tenantId: string;
  keyed: boolean;
  at: number;
  ok: boolean;
  ms: number;
  error?: { name: string; code?: string; maybeStored?: boolean; message: string };
}

/** Publishes one event per call, never retried by the test; keyed or not. */
export class OneShotPublisher {
  readonly calls: Call[] = [];
  readonly prefix = Math.random().toString(36).slice(2, 8);
  #n = 0;
  constructor(
    readonly topic: Topic<FaultEvent>,
    readonly keyed: boolean,
  ) {}

  async publishOne(tenantId: string): Promise<void> {
    const n = this.#n++;
    const id = `${this.prefix}-${n}`;
    const at = Date.now();
    try {
      await this.topic.publish({ data: { n, p: this.prefix }, tenantId, ...(this.keyed ? { idempotencyKey: id } : {}) });
      this.calls.push({ id, tenantId, keyed: this.keyed, at, ok: true, ms: Date.now() - at });
    } catch (err) {
      const e = err as Error & { code?: string; maybeStored?: boolean };
      this.calls.push({
        id, tenantId, keyed: this.keyed, at, ok: false, ms: Date.now() - at,
        error: { name: e.name, code: e.code, maybeStored: e.maybeStored, message: String(e.message).slice(0, 300) },
      });
    }
  }

  /** Calls `publishOne` round-robin over `tenants` until aborted, `concurrency` at a time. */
  async run(tenants: string[], signal: AbortSignal, o: { concurrency?: number; pauseMs?: number } = {}): Promise<void> {
    let i = 0;
    const worker = async () => {
      while (!signal.aborted) {
        await this.publishOne(tenants[i++ % tenants.length]!);
        await new Promise((r) => setTimeout(r, o.pauseMs ?? 20));
      }
    };
    await Promise.all(Array.from({ length: o.concurrency ?? 2 }, worker));
  }
}

/** A `process()` worker counting handler runs per event id (`p-n`). */
export async function countingWorker(topic: Topic<FaultEvent>, consumer: string): Promise<{ worker: Worker; runs: Map<string, number> }> {
  const runs = new Map<string, number>();
  const worker = await topic.process({ consumer, start: "latest", delivery: { maxAttempts: 1_000, backoffMs: [200] } }, (e) => {
    const id = `${e.data.p}-${e.data.n}`;
    runs.set(id, (runs.get(id) ?? 0) + 1);
  });
  return { worker, runs };
}

export interface Stored {
  /** payload id -> copies stored */
  copies: Map<string, number>;
  /** tenant -> stream sequences of its events, ascending */
  sequences: Map<string, number[]>;
  /** The lowest stream sequence read (Infinity when none): below it, retention evicted. */
  first: number;
}

/** Reads the whole stream back: what was really stored. */
export async function readStored(topic: Topic<FaultEvent>): Promise<Stored> {
  const copies = new Map<string, number>();
  const sequences = new Map<string, number[]>();
  let first = Infinity;
  for await (const e of topic.replay()) {
    first = Math.min(first, e.streamSequence);
    const id = `${e.data.p}-${e.data.n}`;
    copies.set(id, (copies.get(id) ?? 0) + 1);
    const tenant = e.tenantId ?? "";
    if (!sequences.has(tenant)) sequences.set(tenant, []);
    sequences.get(tenant)!.push(e.streamSequence);
  }
  return { copies, sequences, first };
}

/** Longest time without an acknowledged call in [from, to] (ms). */
export function longestAckGap(calls: Call[], from: number, to: number): number {
  const acks = calls.filter((c) => c.ok).map((c) => c.at + c.ms).filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  const points = [from, ...acks, to];
  let gap = 0;
  for (let i = 1; i < points.length; i++) gap = Math.max(gap, points[i]! - points[i - 1]!);
  return gap;
}

/** The issue's accounting of one fault: publishers' calls against the stream, handler runs, subscribers. */
export function account(o: {
  calls: Call[];
  stored: Stored;
  runs: Map<string, number>;
  subscribers: ResumingSubscriber[];
}) {
  const { calls, stored, runs } = o;
  let ackedLost = 0;
  let storedTwice = 0;
  let storedTwiceKeyed = 0;
  let inDoubt = 0;
  let inDoubtSaidSo = 0;
  let failedNotStored = 0;
  let failedNotStoredSaidMaybe = 0;
  let untypedErrors = 0;
  let handlerMissing = 0;
  let handlerRepeats = 0;
  const errors: Record<string, number> = {};
  for (const c of calls) {
    const copies = stored.copies.get(c.id) ?? 0;
    if (copies > 1) {
      storedTwice++;
      if (c.keyed) storedTwiceKeyed++;
    }
    if (c.ok && copies === 0) ackedLost++;
    if (!c.ok) {
      const key = `${c.error!.name}${c.error!.code ? `/${c.error!.code}` : ""}${c.error!.maybeStored ? "/maybeStored" : ""}`;
      errors[key] = (errors[key] ?? 0) + 1;
      if (!isTidemarkError(c.error)) untypedErrors++;
      if (copies > 0) {
        inDoubt++;
        if (c.error!.maybeStored) inDoubtSaidSo++;
      } else {
        failedNotStored++;
        if (c.error!.maybeStored) failedNotStoredSaidMaybe++;
      }
    }
    if (copies > 0) {
      const r = runs.get(c.id) ?? 0;
      if (r === 0) handlerMissing++;
      if (r > 1) handlerRepeats += r - 1;
    }
  }
  // Subscribers (all subscribed before any event of their tenant): exactly the stream's sequences.
  let subscribersExact = 0;
  let holes = 0;
  let duplicates = 0;
  for (const s of o.subscribers) {
    const want = stored.sequences.get(s.options.tenantId) ?? [];
    const got = s.sequences;
    const gotSet = new Set(got);
    duplicates += got.length - gotSet.size;
    holes += want.filter((q) => !gotSet.has(q)).length;
    if (got.length === want.length && got.every((q, i) => q === want[i])) subscribersExact++;
  }
  return {
    calls: calls.length,
    acked: calls.filter((c) => c.ok).length,
    failed: calls.filter((c) => !c.ok).length,
    ackedLost,
    storedTwice,
    storedTwiceKeyed,
    inDoubt,
    inDoubtSaidSo,
    failedNotStored,
    failedNotStoredSaidMaybe,
    errors,
    untypedErrors,
    slowestCallMs: Math.max(0, ...calls.map((c) => c.ms)),
    handlerMissing,
    handlerRepeats,
    subscribers: o.subscribers.length,
    subscribersExact,
    holes,
    duplicates,
    resets: o.subscribers.reduce((n, s) => n + s.resets.length, 0),
    reconnects: o.subscribers.reduce((n, s) => n + s.reconnects, 0),
    resubscribes: o.subscribers.reduce((n, s) => n + s.resubscribes, 0),
  };
}

/** A raw, unmapped broker error (no Tidemark code) is a finding, not an expected outcome. */
export function isTidemarkError(e: Call["error"]): boolean {
  return !!e?.code || e?.name === BrokerUnavailableError.name;
}
