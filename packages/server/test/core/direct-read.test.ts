/**
 * Short replays on 2.11+ take one batched direct get; on older servers an ordered consumer.
 * The semantics (tenants, gaps, until) are covered by read.test.ts and gaps.test.ts, which run
 * on both paths: the current server in the full suite, 2.9 in the compatibility leg.
 */
import { describe, it, expect } from "vitest";
import { RetentionGapError } from "../../src/index.js";
import { featuresOf } from "../../src/core/features.js";
import { topicNames } from "../../src/core/broker-names.js";
import { DIRECT_READ_MAX } from "../../src/core/direct-read.js";
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
  it("read - a replay of a few events is one batched direct get on 2.11+ (no consumer), an ordered consumer before", async () => {
    const s = fx.sync();
    const topic = s.topic({ id: "direct.events" });
    for (let i = 1; i <= 10; i++) await topic.publish({ data: i, tenantId: i % 2 ? "odd" : "even" });
    const head = await topic.head();
    let events: unknown[] = [];
    const kinds = await apiRequests(async () => {
      events = await collect(topic.replay({ after: topic.cursorAt(6), tenantId: "odd" }));
    });
    expect(events.map((e) => (e as { data: number }).data)).toEqual([7, 9]);
    if (featuresOf(fx.nc.info!.version).batchDirectGet) {
      expect(kinds).toContain("DIRECT.GET");
      expect(kinds).not.toContain("CONSUMER.CREATE");
    } else {
      expect(kinds).toContain("CONSUMER.CREATE");
    }
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
});
