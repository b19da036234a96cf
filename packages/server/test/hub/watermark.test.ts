import { describe, it, expect } from "vitest";
import { InvalidArgumentError, type TidemarkEvent } from "@tidemark/shared";
import { HubRegistry, type SharedHub } from "../../src/index.js";
import { useCoreFixture } from "../core/fixture.js";
import { eventually, firstRetained, pushWindow, spyTopic } from "./fixture.js";

const fx = useCoreFixture();
// About 18 events of 300 bytes fit in 8 KiB.
const small = { id: "small", maxPayloadBytes: 1024, retention: { maxBytes: 8 * 1024 } };

describe("hub watermarks", () => {
  it("hub - an idle tenant's subscriber follows the hub's watermark: retention passing it is no gap", async () => {
    const sync = fx.sync({ hubs: { windowPollMs: 100 } });
    const topic = sync.topic<string>(small);
    const before = await topic.publish({ data: "a0", tenantId: "a" });
    const ac = new AbortController();
    const marks: string[] = [];
    const events: TidemarkEvent<string>[] = [];
    let error: unknown;
    const hub = topic.hub({ tenantId: "a" }) as SharedHub<string>;
    const done = (async () => {
      try {
        for await (const e of hub.subscribe({ signal: ac.signal, progress: { onCaughtUp: (c) => marks.push(c) } })) events.push(e);
      } catch (err) {
        error = err;
      }
    })();
    await eventually(() => marks.length === 1);
    await pushWindow(topic, "b", 60);
    const first = await firstRetained(sync, "small");
    expect(first).toBeGreaterThan(before.streamSequence + 1); // retention passed the subscriber's start
    // Newer watermarks came while idle, each ahead of where retention had got to.
    await eventually(() => topic.cursorSequence(marks.at(-1)!) >= first - 1, 10_000, "a fresh watermark");
    const seqs = marks.map((m) => topic.cursorSequence(m));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    await topic.publish({ data: "a1", tenantId: "a" });
    await topic.publish({ data: "a2", tenantId: "a" });
    await eventually(() => events.length === 2 || error !== undefined, 10_000, "a's new events");
    expect(error).toBeUndefined();
    expect(events.map((e) => e.data)).toEqual(["a1", "a2"]);
    ac.abort();
    await done;
  });
});

describe("hub watermark refresh", () => {
  it("hub - hubMode tenant: an idle hub's watermark is refreshed every watermarkIntervalMs with one lookup, and not while the head stands still", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    await real.publish({ data: 0, tenantId: "a" });
    let lookups = 0;
    const topic = spyTopic(real, { latestCursor: (o) => (lookups++, real.latestCursor(o)) });
    const ac = new AbortController();
    const idle = (hubs: HubRegistry, marks: number[]) => {
      const it = hubs.get(topic, "a").subscribe({ signal: ac.signal, progress: { onCaughtUp: (c) => marks.push(topic.cursorSequence(c)) } });
      return (async () => {
        for await (const _ of it) throw new Error("no event of a was published");
      })();
    };
    // The default interval: a topic far from retention (64 MiB) gives no reason to look sooner.
    const slow = new HubRegistry({ windowPollMs: 50, hubMode: "tenant" });
    const slowMarks: number[] = [];
    const slowDone = idle(slow, slowMarks);
    await eventually(() => slowMarks.length === 1);
    for (let i = 0; i < 3; i++) await real.publish({ data: i, tenantId: "b" });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(slowMarks).toEqual([1]);
    expect(lookups).toBe(0);

    const hubs = new HubRegistry({ windowPollMs: 50, watermarkIntervalMs: 400, hubMode: "tenant" });
    const marks: number[][] = [[], [], []];
    const subscribers = marks.map((m) => idle(hubs, m));
    await eventually(() => marks.every((m) => m.length >= 1));
    await eventually(() => marks.every((m) => m.at(-1) === 4), 5_000, "the periodic watermark");
    for (const m of marks) expect(m).toEqual([4]); // subscribed at head 4 already
    expect(lookups).toBe(0); // subscribers at the head: nothing to refresh
    await real.publish({ data: 3, tenantId: "b" });
    await eventually(() => marks.every((m) => m.at(-1) === 5), 5_000, "the periodic watermark");
    for (const m of marks) expect(m).toEqual([4, 5]);
    expect(lookups).toBe(1); // one lookup for the hub, not one per subscriber
    await new Promise((r) => setTimeout(r, 1_000)); // more than two intervals with a head that stands still
    expect(lookups).toBe(1);
    expect(marks[0]).toEqual([4, 5]);
    ac.abort();
    await Promise.all([slowDone, ...subscribers]);
    slow.close();
    hubs.close();
  });

  it("hub - hubMode topic: an idle hub's watermark moves to the topic feed's position with no lookup, every watermarkIntervalMs", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    await real.publish({ data: 0, tenantId: "a" });
    let lookups = 0;
    const topic = spyTopic(real, { latestCursor: (o) => (lookups++, real.latestCursor(o)) });
    const ac = new AbortController();
    const hubs = new HubRegistry({ windowPollMs: 50, watermarkIntervalMs: 400, hubMode: "topic" });
    const marks: number[][] = [[], [], []];
    const subscribers = marks.map(async (m) => {
      const it = hubs.get(topic, "a").subscribe({ signal: ac.signal, progress: { onCaughtUp: (c) => m.push(topic.cursorSequence(c)) } });
      for await (const _ of it) throw new Error("no event of a was published");
    });
    await eventually(() => marks.every((m) => m.length === 1));
    for (let i = 1; i <= 3; i++) await real.publish({ data: i, tenantId: "b" });
    await eventually(() => marks.every((m) => m.at(-1) === 4), 5_000, "the periodic watermark");
    for (const m of marks) expect(m).toEqual([1, 4]);
    await new Promise((r) => setTimeout(r, 1_000)); // more than two intervals with a head that stands still
    for (const m of marks) expect(m).toEqual([1, 4]);
    expect(lookups).toBe(0);
    expect(topic.calls.follow).toBe(1); // one whole-topic feed, no tenant follow
    ac.abort();
    await Promise.all(subscribers);
    hubs.close();
  });

  it("hub - registry options are checked", () => {
    expect(() => new HubRegistry({ maxCatchUps: 0 })).toThrow(InvalidArgumentError);
    expect(() => new HubRegistry({ hubMode: "both" as never })).toThrow(InvalidArgumentError);
    expect(() => new HubRegistry({ windowPollMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => new HubRegistry({ watermarkIntervalMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => new HubRegistry({ feedBacklogBytes: -1 })).toThrow(InvalidArgumentError);
    expect(() => new HubRegistry({ feedBacklogBytes: 1.5 })).toThrow(InvalidArgumentError);
  });
});
