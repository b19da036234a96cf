/**
 * The workload and accounting of the issue 29 faults (Jepsen's NATS menu): publishers that make
 * ONE `publish()` call per event (keyed and not, never retried by the test) with every call's
 * start and end kept, and `follow()` readers per tenant that resume from their last cursor after
 * a broker error. At the end the stream is read back and compared with every call and every
 * reader: acked lost, stored twice, in doubt (and whether the error said `maybeStored`),
 * readers exact (the stream's sequences of their tenant, in order, no hole, no duplicate), and
 * every error a reader met, by code (a damaged replica must show as a typed error or a gap,
 * never as a silent skip).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { RetentionGapError, type Cursor, type Topic } from "../../src/index.js";
import type { NatsConnection } from "@nats-io/nats-core";
import type { TestCluster } from "@tidemark/testing";
import { streamLeader } from "./partition-run.js";
import { readStored, type FaultEvent, type Stored } from "./partition-workload.js";

/**
 * Asks the stream's leader to step down in favour of node `index` (named `name`) until that node
 * leads, at most 20 times; true once it does (the faults then read everything through it).
 */
export async function makeLeader(cluster: TestCluster, admin: NatsConnection, stream: string, index: number, name: string): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    if ((await streamLeader(cluster, stream)) === index) return true;
    await admin.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, JSON.stringify({ placement: { preferred: name } }), { timeout: 2_000 }).catch(() => undefined);
    await sleep(700);
  }
  return false;
}

export interface LoadCall {
  id: string;
  keyed: boolean;
  tenantId: string;
  at: number;
  end?: number;
  ok?: boolean;
  /** The acknowledged stream sequence. */
  seq?: number;
  error?: { name: string; code?: string; maybeStored?: boolean; message: string };
}

export interface Reader {
  tenantId: string;
  sequences: number[];
  /** Errors met while following, by `name/code` (each followed by a resume from the last cursor). */
  errors: Record<string, number>;
  /**
   * Retention gaps reported to this reader: the sequences after `requestedSequence` and below
   * `firstAvailableSequence` were said to be removed. The reader resumes at the window's start,
   * as a client does after marking a gap; `account()` checks each report against the stream.
   */
  gaps: { requestedSequence: number; firstAvailableSequence: number }[];
}

export class OneShotLoad {
  readonly calls: LoadCall[] = [];
  readonly readers: Reader[] = [];
  readonly prefix = Math.random().toString(36).slice(2, 8);
  readonly #stop = new AbortController();
  #n = 0;
  #running: Promise<unknown>[] = [];

  constructor(
    readonly topic: Topic<FaultEvent>,
    readonly tenants: string[],
  ) {}

  /** Starts `keyed` + `unkeyed` publish loops and one reader per tenant. */
  start(o: { keyed?: number; unkeyed?: number; pauseMs?: number; padBytes?: number } = {}): void {
    for (const tenantId of this.tenants) this.#running.push(this.#follow(tenantId));
    this.#pad = o.padBytes ? "x".repeat(o.padBytes) : undefined;
    const loops = [...Array<boolean>(o.keyed ?? 2).fill(true), ...Array<boolean>(o.unkeyed ?? 2).fill(false)];
    for (const keyed of loops) this.#running.push(this.#publishLoop(keyed, o.pauseMs ?? 5));
  }

  #pad: string | undefined;

  get acked(): number {
    return this.calls.filter((c) => c.ok).length;
  }

  /** Stops publishing, waits for the calls in flight, and lets the readers reach `head`. */
  async stopPublishing(): Promise<void> {
    this.#publishing = false;
    await Promise.all(this.#loops);
  }

  #publishing = true;
  #loops: Promise<void>[] = [];

  async #publishLoop(keyed: boolean, pauseMs: number): Promise<void> {
    const loop = (async () => {
      while (this.#publishing) {
        const i = this.#n++;
        const tenantId = this.tenants[i % this.tenants.length]!;
        const call: LoadCall = { id: `${this.prefix}-${i}`, keyed, tenantId, at: Date.now() };
        this.calls.push(call);
        try {
          const receipt = await this.topic.publish({ data: { n: i, p: this.prefix, pad: this.#pad }, tenantId, ...(keyed ? { idempotencyKey: call.id } : {}) });
          call.seq = receipt.streamSequence;
          call.ok = true;
        } catch (err) {
          const e = err as Error & { code?: string; maybeStored?: boolean };
          call.ok = false;
          call.error = { name: e.name, code: e.code, maybeStored: e.maybeStored, message: String(e.message).slice(0, 300) + (e.cause instanceof Error ? ` [cause: ${e.cause.name} ${String(e.cause.message).slice(0, 200)}]` : "") };
        }
        call.end = Date.now();
        await sleep(pauseMs);
      }
    })();
    this.#loops.push(loop);
    return loop;
  }

  async #follow(tenantId: string): Promise<void> {
    const reader: Reader = { tenantId, sequences: [], errors: {}, gaps: [] };
    this.readers.push(reader);
    let after: Cursor | undefined;
    while (!this.#stop.signal.aborted) {
      try {
        for await (const e of this.topic.follow({ tenantId, after, signal: this.#stop.signal })) {
          reader.sequences.push(e.streamSequence);
          after = e.cursor;
        }
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        const e = err as Error & { code?: string };
        const key = `${e.name}/${e.code ?? "-"}`;
        reader.errors[key] = (reader.errors[key] ?? 0) + 1;
        if (err instanceof RetentionGapError) {
          // Retention overtook this reader (a few seconds' stall at this load is 16 MiB):
          // resume where the window starts, else every retry meets the same gap.
          reader.gaps.push({ requestedSequence: err.requestedSequence, firstAvailableSequence: err.firstAvailableSequence });
          after = this.topic.cursorAt(err.firstAvailableSequence - 1);
          continue;
        }
        await sleep(200);
      }
    }
  }

  /** Waits until every reader has every stored event of its tenant (or `timeoutMs`); then stops them. */
  async settle(stored: Stored, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const done = () =>
      this.readers.every((r) => {
        const want = stored.sequences.get(r.tenantId) ?? [];
        return r.sequences.length >= want.length && r.sequences.at(-1) === want.at(-1);
      });
    while (!done() && Date.now() < deadline) await sleep(100);
    this.#stop.abort();
    await Promise.allSettled(this.#running);
  }

  /**
   * Replays the whole topic, then each tenant, once each: per replay the count of this load's
   * events when it is what `stored` holds, `got/want` when short, or the error's code.
   */
  async replays(stored: Stored, timeoutMs = 20_000): Promise<(number | string)[]> {
    const replays: (number | string)[] = [];
    for (const tenantId of [undefined, ...this.tenants]) {
      try {
        let got = 0;
        for await (const e of this.topic.replay({ tenantId, signal: AbortSignal.timeout(timeoutMs) })) if (e.data.p === this.prefix) got++;
        const want = tenantId === undefined ? [...stored.copies.keys()].filter((k) => k.startsWith(`${this.prefix}-`)).length : (stored.sequences.get(tenantId)?.length ?? 0);
        replays.push(got === want ? got : `${got}/${want}`);
      } catch (err) {
        replays.push((err as { code?: string }).code ?? (err as Error).name);
      }
    }
    return replays;
  }

  /** Reads the stream back (retrying a broker error for up to `timeoutMs`). */
  async readBack(timeoutMs = 30_000): Promise<{ stored: Stored; readErrors: Record<string, number> }> {
    const readErrors: Record<string, number> = {};
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return { stored: await readStored(this.topic), readErrors };
      } catch (err) {
        const e = err as Error & { code?: string };
        const key = `${e.name}/${e.code ?? "-"}`;
        readErrors[key] = (readErrors[key] ?? 0) + 1;
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  }

  /**
   * The accounting: calls against the stream, readers against the stream. An acknowledged event
   * whose sequence is below the first one still stored was evicted by the topic's retention
   * (`maxBytes`), not lost; readers are compared from that first sequence on.
   */
  account(stored: Stored) {
    let ackedLost = 0;
    let evicted = 0;
    let storedTwice = 0;
    let inDoubt = 0;
    let inDoubtSaidSo = 0;
    // Failed calls that said "nothing was stored" of an event that was: what they said.
    const storedButDenied: { keyed: boolean; ms: number; message: string }[] = [];
    let failedNotStored = 0;
    let untypedErrors = 0;
    const errors: Record<string, number> = {};
    for (const c of this.calls) {
      const copies = stored.copies.get(c.id) ?? 0;
      if (copies > 1) storedTwice++;
      if (c.ok && copies === 0) {
        if (c.seq !== undefined && c.seq < stored.first) evicted++;
        else ackedLost++;
      }
      if (c.ok === false) {
        const key = `${c.error!.name}/${c.error!.code ?? "-"}${c.error!.maybeStored ? "/maybeStored" : ""}`;
        errors[key] = (errors[key] ?? 0) + 1;
        if (!c.error!.code) untypedErrors++;
        if (copies > 0) {
          inDoubt++;
          if (c.error!.maybeStored) inDoubtSaidSo++;
          else storedButDenied.push({ keyed: c.keyed, ms: (c.end ?? c.at) - c.at, message: c.error!.message });
        } else failedNotStored++;
      }
    }
    let readersExact = 0;
    let holes = 0;
    let duplicates = 0;
    let outOfOrder = 0;
    // Reported gaps: how many, and how many said an event was removed that the stream still holds.
    let gapsReported = 0;
    let falseGaps = 0;
    const readerErrors: Record<string, number> = {};
    for (const r of this.readers) {
      const want = stored.sequences.get(r.tenantId) ?? [];
      const got = r.sequences.filter((q) => q >= stored.first);
      const gotSet = new Set(got);
      duplicates += got.length - gotSet.size;
      holes += want.filter((q) => !gotSet.has(q)).length;
      for (let i = 1; i < got.length; i++) if (got[i]! <= got[i - 1]!) outOfOrder++;
      if (got.length === want.length && got.every((q, i) => q === want[i])) readersExact++;
      for (const g of r.gaps) {
        gapsReported++;
        if (want.some((q) => q > g.requestedSequence && q < g.firstAvailableSequence)) falseGaps++;
      }
      for (const [k, v] of Object.entries(r.errors)) readerErrors[k] = (readerErrors[k] ?? 0) + v;
    }
    return {
      calls: this.calls.length,
      acked: this.acked,
      failed: this.calls.filter((c) => c.ok === false).length,
      ackedLost,
      evicted,
      storedTwice,
      inDoubt,
      inDoubtSaidSo,
      storedButDenied,
      failedNotStored,
      errors,
      untypedErrors,
      slowestCallMs: Math.max(0, ...this.calls.map((c) => (c.end ?? c.at) - c.at)),
      readers: this.readers.length,
      readersExact,
      holes,
      duplicates,
      outOfOrder,
      gapsReported,
      falseGaps,
      readerErrors,
    };
  }
}
