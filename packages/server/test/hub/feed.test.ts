/** Hub mode "topic": tenants joining a running whole-topic feed at its seam, and the catch-up bound. */
import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, type TidemarkEvent } from "@tidemark/shared";
import { HubRegistry, type SharedHub, type Topic } from "../../src/index.js";
import { collect, useCoreFixture } from "../core/fixture.js";
import { eventually, spyTopic } from "./fixture.js";

const fx = useCoreFixture();

function read<T>(hub: SharedHub<T>, options: { after?: string; signal: AbortSignal }) {
  const events: TidemarkEvent<T>[] = [];
  const state = { events, caughtUp: 0, error: undefined as unknown };
  void (async () => {
    try {
      for await (const e of hub.subscribe({ ...options, progress: { onCaughtUp: () => state.caughtUp++ } })) events.push(e);
    } catch (err) {
      state.error = err;
    }
  })();
  return state;
}

async function publishMany(topic: Topic<number>, tenantId: string, from: number, count: number) {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId });
}

describe("hub topic feed", () => {
  it("hub - hubMode topic: tenants resuming behind a running feed join it at the seam with no hole and no duplicate", async () => {
    const topic = spyTopic(fx.sync().topic<number>({ id: "feed" }));
    const hubs = new HubRegistry({ maxCatchUps: 2, hubMode: "topic" });
    const ac = new AbortController();
    const keeper = read(hubs.get(topic, "k"), { signal: ac.signal }); // keeps the feed running
    await eventually(() => keeper.caughtUp === 1);
    const tenants = ["a", "b", "c", "d", "e"];
    await Promise.all(tenants.map((t) => publishMany(topic, t, 0, 20)));
    const cursors = await Promise.all(tenants.map(async (t) => (await collect(topic.replay({ tenantId: t })))[4]!.cursor));
    // Resume while the tenants keep publishing: each catch-up crosses the feed's seam.
    const readers = tenants.map((t, i) => read(hubs.get(topic, t), { after: cursors[i], signal: ac.signal }));
    await Promise.all(tenants.map((t) => publishMany(topic, t, 20, 20)));
    await eventually(() => readers.every((r) => r.events.length >= 35), 20_000, "every tenant's events");
    await new Promise((r) => setTimeout(r, 200));
    for (const [i, r] of readers.entries()) {
      expect(r.error).toBeUndefined();
      expect(r.events.map((e) => e.data)).toEqual(Array.from({ length: 35 }, (_, k) => k + 5));
      expect(r.events.every((e) => e.tenantId === tenants[i])).toBe(true);
    }
    expect(topic.calls.follow).toBe(1); // one whole-topic feed for six tenants
    expect(hubs.feedCount).toBe(1);
    expect(hubs.followerCount).toBe(6);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode topic: at most maxCatchUps catch-up replays run at once", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    let running = 0;
    let most = 0;
    const topic = spyTopic(real, {
      replay: (o) => ({
        async *[Symbol.asyncIterator]() {
          running++;
          most = Math.max(most, running);
          try {
            await new Promise((r) => setTimeout(r, 50));
            yield* real.replay(o);
          } finally {
            running--;
          }
        },
      }),
    });
    const tenants = Array.from({ length: 8 }, (_, i) => `t${i}`);
    await Promise.all(tenants.map((t) => publishMany(real, t, 0, 3)));
    const hubs = new HubRegistry({ maxCatchUps: 2, hubMode: "topic" });
    const ac = new AbortController();
    const readers = tenants.map((t) => read(hubs.get(topic, t), { after: real.cursorAt(0), signal: ac.signal }));
    await eventually(() => readers.every((r) => r.events.length === 3), 20_000, "every tenant's backlog");
    expect(readers.map((r) => r.events.map((e) => e.data))).toEqual(tenants.map(() => [0, 1, 2]));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode per topic: a function picks the mode by topic id", async () => {
    const sync = fx.sync();
    const busy = spyTopic(sync.topic<number>({ id: "busy" }));
    const quiet = spyTopic(sync.topic<number>({ id: "quiet" }));
    const hubs = new HubRegistry({ hubMode: (id) => (id === "busy" ? "tenant" : "topic") });
    const ac = new AbortController();
    const readers = ["a", "b"].flatMap((t) => [read(hubs.get(busy, t), { signal: ac.signal }), read(hubs.get(quiet, t), { signal: ac.signal })]);
    await eventually(() => readers.every((r) => r.caughtUp === 1));
    await eventually(() => busy.calls.follow === 2 && quiet.calls.follow === 1);
    expect(hubs.feedCount).toBe(1);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode topic: a storm of tenants resuming a little behind the head is served by one or two whole-topic reads, not a replay per tenant", async () => {
    const topic = spyTopic(fx.sync().topic<number>({ id: "feed" }));
    const hubs = new HubRegistry({ hubMode: "topic" });
    const tenants = Array.from({ length: 40 }, (_, i) => `t${i}`);
    for (let round = 0; round < 5; round++) for (const t of tenants) await topic.publish({ data: round, tenantId: t });
    // Each tenant resumes after its second event (a bridge restart: every client one or more behind).
    const events = await collect(topic.replay());
    const cursors = tenants.map((t) => events.filter((e) => e.tenantId === t)[1]!.cursor);
    const ac = new AbortController();
    const readers = tenants.map((t, i) => read(hubs.get(topic, t), { after: cursors[i], signal: ac.signal }));
    await eventually(() => readers.every((r) => r.caughtUp >= 1), 20_000, "every tenant caught up");
    await Promise.all(tenants.map((t) => topic.publish({ data: 9, tenantId: t })));
    await eventually(() => readers.every((r) => r.events.length === 4), 20_000, "every tenant's events");
    await new Promise((r) => setTimeout(r, 200));
    for (const [i, r] of readers.entries()) {
      expect(r.error).toBeUndefined();
      expect(r.events.map((e) => e.data)).toEqual([2, 3, 4, 9]);
      expect(r.events.every((e) => e.tenantId === tenants[i])).toBe(true);
    }
    expect(topic.calls.follow).toBe(1);
    expect(topic.calls.replay).toBeLessThanOrEqual(3);
    ac.abort();
    hubs.close();
  });

  /** 40 tenants with five events each; each resumes after its second (a bridge restart). */
  async function resumeStorm(topic: Topic<number>, real: Topic<number>, hubs: HubRegistry, ac: AbortController, beforeResume?: () => Promise<void>) {
    const tenants = Array.from({ length: 40 }, (_, i) => `t${i}`);
    for (let round = 0; round < 5; round++) for (const t of tenants) await topic.publish({ data: round, tenantId: t });
    await beforeResume?.();
    const events = await collect(real.replay()); // not through the spy
    const cursors = tenants.map((t) => events.filter((e) => e.tenantId === t)[1]!.cursor);
    const readers = tenants.map((t, i) => read(hubs.get(topic, t), { after: cursors[i], signal: ac.signal }));
    await eventually(() => readers.every((r) => r.caughtUp >= 1 || r.error !== undefined), 30_000, "every tenant caught up");
    await Promise.all(tenants.map((t) => topic.publish({ data: 9, tenantId: t })));
    await eventually(() => readers.every((r) => r.events.length === 4 || r.error !== undefined), 30_000, "every tenant's events");
    await new Promise((r) => setTimeout(r, 200));
    for (const [i, r] of readers.entries()) {
      expect(r.error).toBeUndefined();
      expect(r.events.map((e) => e.data)).toEqual([2, 3, 4, 9]);
      expect(r.events.every((e) => e.tenantId === tenants[i])).toBe(true);
    }
  }

  it("hub - hubMode topic: a storm whose first whole-topic cover read fails is still served by the cover (the read is retried), not a replay per tenant", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    let failed = 0;
    const topic = spyTopic(real, {
      replay: (o) => {
        // The first whole-topic read fails the way a timeout under load does.
        if (o?.tenantId === undefined && failed++ === 0) {
          return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new BrokerUnavailableError("request timed out")) }) };
        }
        return real.replay(o);
      },
    });
    const hubs = new HubRegistry({ hubMode: "topic" });
    const ac = new AbortController();
    await resumeStorm(topic, real, hubs, ac);
    expect(failed).toBeGreaterThan(1);
    expect(hubs.stats.fallbacks).toEqual({});
    expect(hubs.stats.covered).toBe(40);
    expect(topic.calls.follow).toBe(1);
    expect(topic.calls.replay).toBeLessThanOrEqual(5);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode topic: a storm behind more than the backlog's byte bound falls back to tenant replays, at most maxCatchUps at once, instead of reading the topic again and again", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    let running = 0;
    let most = 0;
    let wholeTopic = 0;
    const topic = spyTopic(real, {
      replay: (o) => {
        if (o?.tenantId === undefined) wholeTopic++;
        return {
          async *[Symbol.asyncIterator]() {
            running++;
            most = Math.max(most, running);
            try {
              yield* real.replay(o);
            } finally {
              running--;
            }
          },
        };
      },
    });
    // 4 MiB an event: the feed's backlog (64 MiB) holds 16 of the 200.
    const hubs = new HubRegistry({ hubMode: "topic", maxCatchUps: 4, sizeOf: () => 4 * 1024 * 1024, ringBytes: 2 ** 40 });
    const ac = new AbortController();
    await resumeStorm(topic, real, hubs, ac);
    expect(wholeTopic).toBeLessThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(4);
    expect(topic.calls.follow).toBe(1);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode topic: a warmed feed (warm(), as a bridge does at start) serves a resume storm from memory: the whole-topic read is done before the first tenant asks, and none waits for another", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    const topic = spyTopic(real);
    const hubs = new HubRegistry({ hubMode: "topic" });
    const ac = new AbortController();
    // The storm's events are published by resumeStorm before its readers come: warm once they
    // are, as a restarted bridge warms before its clients come back.
    let warmed: Promise<void> | undefined;
    const publish = topic.publish.bind(topic);
    let published = 0;
    const warming = spyTopic(topic, {
      publish: async (o) => {
        const receipt = await publish(o);
        if (++published === 200) warmed = hubs.warm(warming, { holdMs: 60_000 });
        return receipt;
      },
    });
    await resumeStorm(warming, real, hubs, ac, async () => {
      await warmed;
      expect(topic.calls.replay).toBe(1); // the warm read
      expect(hubs.feedCount).toBe(1); // held with no follower yet
    });
    expect(topic.calls.replay).toBe(1); // no cover read on the resume path
    expect(hubs.stats.covered).toBe(40);
    expect(hubs.stats.fallbacks).toEqual({});
    expect(hubs.stats.subscriberReplays).toBe(0);
    expect(topic.calls.follow).toBe(1);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode topic: a warmed feed with no follower stops when its hold ends", async () => {
    const topic = spyTopic(fx.sync().topic<number>({ id: "feed" }));
    await topic.publish({ data: 1, tenantId: "a" });
    const hubs = new HubRegistry({ hubMode: "topic" });
    await hubs.warm(topic, { holdMs: 300 });
    expect(hubs.feedCount).toBe(1);
    await eventually(() => hubs.feedCount === 0, 5_000, "the warmed feed stopped");
    hubs.close();
  });

  it("hub - hubMode topic: a storm further behind than maxBackfillSequences but within the feed's backlog is served by one cover read, not a replay per subscriber", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    const topic = spyTopic(real);
    // Each tenant resumes about 120 sequences behind the head: past maxBackfillSequences.
    const hubs = new HubRegistry({ hubMode: "topic", maxBackfillSequences: 10 });
    const ac = new AbortController();
    await resumeStorm(topic, real, hubs, ac);
    expect(hubs.stats.subscriberReplays).toBe(0);
    expect(hubs.stats.covered).toBe(40);
    expect(topic.calls.replay).toBeLessThanOrEqual(2);
    ac.abort();
    hubs.close();
  });
});
