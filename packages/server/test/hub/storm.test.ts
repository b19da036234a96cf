import { describe, it, expect } from "vitest";
import type { TidemarkEvent } from "@tidemark/shared";
import { HubRegistry, type Topic } from "../../src/index.js";
import { collect, useCoreFixture } from "../core/fixture.js";
import { eventually, jsApiRequests, spyTopic } from "./fixture.js";

const fx = useCoreFixture();
const TENANTS = ["a", "b", "c", "d"];
const SPACING_MS = 25;

async function publishRound(topic: Topic<number>, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId: TENANTS[i % TENANTS.length] });
}

describe("hub resume storm", () => {
  it("hub - a storm of subscribers resuming from different cursors while events are published: each gets exactly its missing events, in order; head reads are shared and spaced", async () => {
    const real = fx.sync().topic<number>({ id: "storm" });
    await publishRound(real, 0, 80);
    const before = await collect(real.replay());
    // When each head read started: reads must start at least the spacing apart.
    const starts: number[] = [];
    const topic = spyTopic(real, { head: () => (starts.push(performance.now()), real.head()) });
    const hubs = new HubRegistry({ headReadSpacingMs: SPACING_MS });
    const ac = new AbortController();
    const apiBefore = await jsApiRequests(fx.nats);
    const heads0 = topic.calls.head;

    // 200 subscribers arrive over ~400 ms (as sockets of a reconnecting crowd do), each from a
    // cursor of its tenant some events back, while 40 more events are published.
    const N = 200;
    const subs: { tenantId: string; after: number; events: TidemarkEvent<number>[]; done: Promise<void> }[] = [];
    const started = Date.now();
    const publishing = publishRound(real, 80, 40);
    for (let i = 0; i < N; i++) {
      const tenantId = TENANTS[i % TENANTS.length]!;
      const own = before.filter((e) => e.tenantId === tenantId);
      const from = own[i % own.length]!;
      const events: TidemarkEvent<number>[] = [];
      const iterable = hubs.get(topic, tenantId).subscribe({ after: from.cursor, signal: ac.signal });
      const done = (async () => {
        for await (const e of iterable) events.push(e);
      })();
      done.catch(() => undefined);
      subs.push({ tenantId, after: from.streamSequence, events, done });
      await new Promise((r) => setTimeout(r, 2));
    }
    await publishing;
    const all = await collect(real.replay());
    const expected = (s: (typeof subs)[number]) => all.filter((e) => e.tenantId === s.tenantId && e.streamSequence > s.after).map((e) => e.streamSequence);
    await eventually(() => subs.every((s) => s.events.length >= expected(s).length), 20_000, "every subscriber caught up");
    await new Promise((r) => setTimeout(r, 100)); // a duplicate would arrive here
    for (const s of subs) expect(s.events.map((e) => e.streamSequence)).toEqual(expected(s));

    const totalMs = Date.now() - started;

    // Without spacing every subscriber arriving after a read answered starts a read of its own
    // (a local broker answers in well under a millisecond): about one per subscriber here, with
    // starts a fraction of a millisecond apart. Bounds by the clock, so a loaded machine (a
    // slower storm) does not make them flaky.
    const heads = topic.calls.head - heads0;
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(SPACING_MS - 2);
    expect(heads).toBeLessThanOrEqual(Math.ceil(totalMs / SPACING_MS) + 2);
    expect(hubs.headReads(topic as Topic<unknown>)).toBe(heads);
    // The broker's count (/jsz api.total): the head reads plus a handful that do not grow with
    // the subscribers (the feed's consumer, its catch-ups, the window polls).
    const api = (await jsApiRequests(fx.nats)) - apiBefore;
    console.log(`storm: ${N} subscribers in ${totalMs} ms, ${heads} head reads, ${api} JetStream API requests`);
    expect(api).toBeLessThan(heads + 40);

    // A live-only subscriber of a running hub takes a head read of its own, at once (no
    // spacing to wait out), and gets only what is published after it subscribed.
    const headsBefore = topic.calls.head;
    const live: number[] = [];
    const liveIt = hubs.get(topic, "a").subscribe({ signal: ac.signal });
    const liveDone = (async () => {
      for await (const e of liveIt) live.push(e.data);
    })();
    liveDone.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    await real.publish({ data: 1000, tenantId: "a" });
    await eventually(() => live.length === 1, 10_000, "the live event");
    expect(live).toEqual([1000]);
    expect(topic.calls.head).toBe(headsBefore + 1);

    ac.abort();
    await Promise.all([...subs.map((s) => s.done), liveDone]);
    hubs.close();
  });
});
