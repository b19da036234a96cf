/**
 * Short replays take direct gets: one batched get on 2.11+ (up to DIRECT_READ_MAX sequences),
 * one get per sequence before (up to DIRECT_SINGLE_MAX); longer ones an ordered consumer, except
 * a tenant's on a single-replica stream on 2.11+, which starts with one batched get of its next
 * DIRECT_READ_MAX events however long the range.
 * The semantics (tenants, gaps, until) are covered by read.test.ts and gaps.test.ts, which run
 * on both paths: the current server in the full suite, 2.9 in the compatibility leg; the last
 * test here compares the two paths event for event.
 */
import { describe, it, expect } from "vitest";
import { RetentionGapError } from "../../src/index.js";
import { featuresOf, topicNames, DIRECT_READ_MAX, DIRECT_READ_MAX_BYTES, DIRECT_SINGLE_MAX, type TopicRuntime } from "../../src/internal.js";
import type { JetStreamManager } from "@nats-io/jetstream";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

/** JetStream API requests made while `work` runs, by kind ("CONSUMER.CREATE", "DIRECT.GET", ...). */
async function apiRequests(work: () => Promise<unknown>): Promise<string[]> {
  const sub = fx.nc.subscribe("$JS.API.>");
  const kinds: string[] = [];
  const done = (async () => {
    for await (const m of sub) kinds.push(m.subject.split(".").slice(2, 4).join("."));
  })();
  await fx.nc.flush();
  await work();
  await fx.nc.flush();
  await new Promise((r) => setTimeout(r, 100));
  sub.unsubscribe();
  await done;
  return kinds;
}

describe("short replays", () => {
  it("read - a tenant's replay of a long range with few of its events is one batched direct get on 2.11+, no consumer; a busy tenant's reads on with a consumer, the same events", async () => {
    const s = fx.sync();
    const topic = s.topic<number>({ id: "direct.sparse" });
    const rare = new Set([5, 90, 170]);
    for (let i = 1; i <= 200; i++) await topic.publish({ data: i, tenantId: rare.has(i) ? "rare" : "busy" });
    const batched = featuresOf(fx.nc.info!.version).batchDirectGet;
    let events: { data: number }[] = [];
    const kinds = await apiRequests(async () => {
      events = await collect(topic.replay({ tenantId: "rare" }));
    });
    expect(events.map((e) => e.data)).toEqual([5, 90, 170]);
    // 2.9 and 2.10 (no batched get): a long range is a consumer, as before.
    expect(kinds.includes("CONSUMER.CREATE")).toBe(!batched);
    if (batched) expect(kinds.filter((k) => k === "DIRECT.GET")).toHaveLength(1);
    // From a cursor, to an until, past the tenant's last event, and nothing of it in range.
    expect((await collect(topic.replay({ tenantId: "rare", after: topic.cursorAt(5) }))).map((e) => e.data)).toEqual([90, 170]);
    expect((await collect(topic.replay({ tenantId: "rare", after: topic.cursorAt(4), until: topic.cursorAt(169) }))).map((e) => e.data)).toEqual([5, 90]);
    expect(await collect(topic.replay({ tenantId: "rare", after: topic.cursorAt(170) }))).toEqual([]);
    expect(await collect(topic.replay({ tenantId: "rare", after: topic.cursorAt(5), until: topic.cursorAt(89) }))).toEqual([]);
    // A busy tenant: 197 events, more than one get returns; the consumer reads on after them.
    const busy = await collect(topic.replay({ tenantId: "busy" }));
    expect(busy.map((e) => e.data)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1).filter((i) => !rare.has(i)));
    // Large events: one get returns at most DIRECT_READ_MAX_BYTES; the read goes on after them.
    const big = s.topic<{ i: number; pad: string }>({ id: "direct.sparse-big", maxPayloadBytes: 256 * 1024 });
    const pad = "x".repeat(100 * 1024);
    for (let i = 1; i <= 40; i++) await big.publish({ data: { i, pad: i % 8 === 0 ? pad : "" }, tenantId: i % 8 === 0 ? "large" : "small" });
    expect((await collect(big.replay({ tenantId: "large" }))).map((e) => e.data.i)).toEqual([8, 16, 24, 32, 40]);
    expect(5 * pad.length).toBeGreaterThan(DIRECT_READ_MAX_BYTES);
    // Retention removed the tenant's first event: a cursor before it is a gap, as on every path.
    await fx.jsm.streams.purge(topicNames(s.namespace, "direct.sparse").stream, { seq: 50 });
    expect(await failure(topic.replay({ tenantId: "rare", after: topic.cursorAt(3) }))).toBeInstanceOf(RetentionGapError);
    expect((await collect(topic.replay({ tenantId: "rare", after: topic.cursorAt(49) }))).map((e) => e.data)).toEqual([90, 170]);
  });

  it("read - a replay of a few events is direct gets (batched on 2.11+, one per sequence before), no consumer", async () => {
    const s = fx.sync();
    const topic = s.topic({ id: "direct.events" });
    for (let i = 1; i <= 10; i++) await topic.publish({ data: i, tenantId: i % 2 ? "odd" : "even" });
    const head = await topic.head();
    let events: unknown[] = [];
    const kinds = await apiRequests(async () => {
      events = await collect(topic.replay({ after: topic.cursorAt(6), tenantId: "odd" }));
    });
    expect(events.map((e) => (e as { data: number }).data)).toEqual([7, 9]);
    expect(kinds).toContain("DIRECT.GET");
    expect(kinds).not.toContain("CONSUMER.CREATE");
    // One request for the range on 2.11+, one per sequence (7..10) before.
    expect(kinds.filter((k) => k === "DIRECT.GET")).toHaveLength(featuresOf(fx.nc.info!.version).batchDirectGet ? 1 : 4);
    // Whole topic, an until, and a range past the direct limit all read the same events.
    expect((await collect(topic.replay({ after: topic.cursorAt(2), until: topic.cursorAt(5) }))).map((e) => e.data)).toEqual([3, 4, 5]);
    expect((await collect(topic.replay({ after: topic.cursorAt(9) }))).map((e) => e.data)).toEqual([10]);
    expect(await collect(topic.replay({ after: head }))).toEqual([]);
    expect(await collect(topic.replay({ after: topic.cursorAt(0), tenantId: "nobody" }))).toEqual([]);
  });

  it("read - a short replay whose start was removed by retention is a RetentionGapError, whole topic and tenant", async () => {
    const s = fx.sync();
    const topic = s.topic({ id: "direct.gap" });
    for (let i = 1; i <= 6; i++) await topic.publish({ data: i, tenantId: "t" });
    await fx.jsm.streams.purge(topicNames(s.namespace, "direct.gap").stream, { seq: 4 });
    const whole = await failure(topic.replay({ after: topic.cursorAt(1) }));
    expect(whole).toBeInstanceOf(RetentionGapError);
    expect(whole).toMatchObject({ requestedSequence: 1, firstAvailableSequence: 4 });
    const tenant = await failure(topic.replay({ after: topic.cursorAt(2), tenantId: "t" }));
    expect(tenant).toBeInstanceOf(RetentionGapError);
    expect((await collect(topic.replay({ after: topic.cursorAt(3), tenantId: "t" }))).map((e) => e.data)).toEqual([4, 5, 6]);
    expect(DIRECT_READ_MAX).toBeGreaterThanOrEqual(6);
  });

  it("read - direct-get replays yield exactly the events of the consumer path: tenants, after, until, gaps", async () => {
    const s = fx.sync();
    const topic = s.topic<number>({ id: "direct.same" });
    const tenants = [undefined, "a", "b"] as const;
    const total = DIRECT_READ_MAX + 16;
    for (let i = 1; i <= total; i++) await topic.publish({ data: i, ...(i % 3 === 0 ? {} : { tenantId: tenants[i % 3] }) });
    // Retention removes the first few: short reads that start below the window fail alike.
    await fx.jsm.streams.purge(topicNames(s.namespace, "direct.same").stream, { seq: 5 });
    for (const tenantId of tenants) {
      // A whole-range replay is longer than any direct read: the ordered consumer path.
      const all = await collect(topic.replay({ after: topic.cursorAt(4), ...(tenantId ? { tenantId } : {}) }));
      for (let after = 0; after <= total; after += 5) {
        for (const span of [1, 3, DIRECT_SINGLE_MAX, DIRECT_READ_MAX, total]) {
          const until = after + span;
          const read = topic.replay({ after: topic.cursorAt(after), until: topic.cursorAt(until), ...(tenantId ? { tenantId } : {}) });
          if (after < 4) {
            // A cursor below the retained window fails on either path, tenant or not.
            expect(await failure(read)).toBeInstanceOf(RetentionGapError);
            continue;
          }
          const got = await collect(read);
          const want = all.filter((e) => e.streamSequence > after && e.streamSequence <= until);
          expect(got, `after ${after} until ${until} tenant ${tenantId}`).toEqual(want);
        }
      }
    }
  });
});

/**
 * Direct gets answered as a replica (or a mirror with mirror_direct) that is behind answers
 * them: nothing above `heldUpTo`. Only the direct API is replaced; stream info, message gets
 * and consumers are the real server's. (On a real cluster the head's stream info reaches the
 * reader over the same route, in order, as the data that replica lacks, so a stale direct
 * answer cannot be made on demand: test/core/reader-lagging.test.ts covers the consumer path.)
 */
function staleDirect(direct: JetStreamManager["direct"], heldUpTo: number): JetStreamManager["direct"] {
  return new Proxy(direct, {
    get(target, prop, receiver) {
      if (prop === "getMessage") {
        return async (stream: string, q: { seq: number }) => (q.seq > heldUpTo ? null : target.getMessage(stream, q));
      }
      if (prop === "getBatch") {
        return async (stream: string, q: Parameters<typeof target.getBatch>[1]) => {
          const it = await target.getBatch(stream, q);
          return (async function* () {
            for await (const m of it) if (m.seq <= heldUpTo) yield m;
          })();
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

describe("short replays answered by a store that is behind", () => {
  it("read - a direct-get replay answered without the newest events still yields every event up to the head, whole topic and tenant", async () => {
    const s = fx.sync();
    const topic = s.topic<number>({ id: "direct.stale" });
    for (let i = 1; i <= 10; i++) await topic.publish({ data: i, tenantId: i % 2 ? "odd" : "even" });
    const h = await (topic as unknown as TopicRuntime).ready();
    const real = h.jsm.direct;
    Object.defineProperty(h.jsm, "direct", { value: staleDirect(h.jsm.direct, 6), configurable: true });
    try {
      const data = (events: { data: number }[]) => events.map((e) => e.data);
      expect(data(await collect(topic.replay({ after: topic.cursorAt(2) })))).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
      expect(data(await collect(topic.replay({ after: topic.cursorAt(2), tenantId: "odd" })))).toEqual([3, 5, 7, 9]);
      expect(data(await collect(topic.replay({ after: topic.cursorAt(7), until: topic.cursorAt(9) })))).toEqual([8, 9]);
      expect(data(await collect(topic.replay({ after: topic.cursorAt(6), tenantId: "even" })))).toEqual([8, 10]);
    } finally {
      Object.defineProperty(h.jsm, "direct", { value: real, configurable: true });
    }
  });
});
