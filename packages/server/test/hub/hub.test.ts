import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, ErrorCode, RetentionGapError, type TidemarkEvent } from "@tidemark/shared";
import { HubRegistry, type Hub, type SharedHub, type SharedHubSubscribeOptions, type Topic } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "../core/fixture.js";
import { consumersOf, eventually, spyTopic } from "./fixture.js";

const fx = useCoreFixture();

/** Reads a subscription in the background into an array; `caughtUp` counts its caught-up marks. */
function reader<T>(
  hub: Hub<T>,
  options: SharedHubSubscribeOptions = {},
  onEvent?: (e: TidemarkEvent<T>) => Promise<void> | void,
) {
  const events: TidemarkEvent<T>[] = [];
  const state = { events, caughtUp: 0, done: undefined as unknown as Promise<void> };
  const iterable = (hub as SharedHub<T>).subscribe({ ...options, progress: { onCaughtUp: () => state.caughtUp++ } });
  state.done = (async () => {
    for await (const e of iterable) {
      events.push(e);
      await onEvent?.(e);
    }
  })();
  state.done.catch(() => undefined);
  return state;
}

async function publishMany(topic: Topic<number>, tenantId: string | undefined, from: number, count: number) {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId });
}

describe("hub", () => {
  it("hub - subscribe after a cursor replays, then joins live with no hole and no duplicate", async () => {
    const topic = fx.sync().topic<number>({ id: "feed" });
    await publishMany(topic, "a", 0, 10);
    const cursor = (await collect(topic.replay({ tenantId: "a" })))[3]!.cursor;
    const ac = new AbortController();
    const r = reader(topic.hub({ tenantId: "a" }), { after: cursor, signal: ac.signal });
    // publish while the subscriber is replaying and joining
    await Promise.all([publishMany(topic, "a", 10, 30), publishMany(topic, "b", 100, 10)]);
    await eventually(() => r.events.length === 36, 10_000, "36 events");
    ac.abort();
    await r.done;
    expect(r.events.map((e) => e.data)).toEqual(Array.from({ length: 36 }, (_, i) => i + 4));
  });

  it("hub - without after it is live-only from the head read at subscribe()", async () => {
    const topic = fx.sync().topic<number>({ id: "feed" });
    await publishMany(topic, "a", 0, 5);
    const ac = new AbortController();
    const r = reader(topic.hub({ tenantId: "a" }), { signal: ac.signal });
    await eventually(() => r.caughtUp === 1);
    await publishMany(topic, "a", 5, 5);
    await eventually(() => r.events.length === 5);
    ac.abort();
    await r.done;
    expect(r.events.map((e) => e.data)).toEqual([5, 6, 7, 8, 9]);
  });

  it("hub - a live-only subscriber joining a running hub gets no event published before subscribe()", async () => {
    // The follower may not have pushed an event whose publish already returned; starting at its
    // watermark would hand the new subscriber that older event. Each round races exactly that.
    const topic = fx.sync().topic<number>({ id: "feed" });
    const hub = topic.hub({ tenantId: "a" });
    const ac = new AbortController();
    const first = reader(hub, { signal: ac.signal });
    await eventually(() => first.caughtUp === 1);
    const late: ReturnType<typeof reader<number>>[] = [];
    for (let round = 0; round < 20; round++) {
      await topic.publish({ data: 2 * round, tenantId: "a" });
      late.push(reader(hub, { signal: ac.signal }));
      await Promise.all(late.map((r) => eventually(() => r.caughtUp === 1)));
      await topic.publish({ data: 2 * round + 1, tenantId: "a" });
    }
    await eventually(() => first.events.length === 40);
    await Promise.all(late.map((r, i) => eventually(() => r.events.at(-1)?.data === 39, 10_000, `subscriber ${i}`)));
    ac.abort();
    await Promise.all([first.done, ...late.map((r) => r.done)]);
    // Subscriber i subscribed after 2i was published: its first event is 2i + 1, then every one.
    late.forEach((r, i) => expect(r.events.map((e) => e.data)).toEqual(Array.from({ length: 39 - 2 * i }, (_, k) => 2 * i + 1 + k)));
  });

  it("hub - hubMode tenant: JetStream consumers grow with (topic, tenant) pairs, not subscribers, and retire with the last", async () => {
    const sync = fx.sync({ hubs: { hubMode: "tenant" } });
    const topic = sync.topic<number>({ id: "feed" });
    await topic.publish({ data: 0, tenantId: "t0" });
    const ac = new AbortController();
    const readers: ReturnType<typeof reader<number>>[] = [];
    for (let t = 0; t < 3; t++) {
      for (let s = 0; s < 20; s++) readers.push(reader(topic.hub({ tenantId: `t${t}` }), { signal: ac.signal }));
    }
    await eventually(() => readers.every((r) => r.caughtUp === 1));
    expect(topic.hub({ tenantId: "t0" }).subscriberCount).toBe(20);
    await publishMany(topic, "t1", 1, 3);
    await eventually(() => readers.slice(20, 40).every((r) => r.events.length === 3));
    expect(await consumersOf(fx.nats, sync.namespace)).toBe(3);
    ac.abort();
    await Promise.all(readers.map((r) => r.done));
    expect(topic.hub({ tenantId: "t0" }).subscriberCount).toBe(0);
    await eventually(async () => (await consumersOf(fx.nats, sync.namespace)) === 0, 10_000, "consumers retired");
  });

  it("hub - every attached subscriber gets the same event object", async () => {
    const topic = fx.sync().topic<number>({ id: "feed" });
    const ac = new AbortController();
    const a = reader(topic.hub({ tenantId: "x" }), { signal: ac.signal });
    const b = reader(topic.hub({ tenantId: "x" }), { signal: ac.signal });
    await eventually(() => a.caughtUp + b.caughtUp === 2);
    await topic.publish({ data: 1, tenantId: "x" });
    await eventually(() => a.events.length === 1 && b.events.length === 1);
    expect(a.events[0]).toBe(b.events[0]);
    ac.abort();
  });

  it("hub - a slow subscriber stays bounded, does not slow the others, and still gets everything", async () => {
    const topic = spyTopic(fx.sync().topic<number>({ id: "feed" }));
    const hubs = new HubRegistry({ ringEvents: 8 });
    const ac = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = reader(hubs.get(topic, "a"), { signal: ac.signal }, async (e) => {
      if (e.data === 0) await gate; // stalls on the first event until the others are done
    });
    const fast = reader(hubs.get(topic, "a"), { signal: ac.signal });
    await eventually(() => slow.caughtUp + fast.caughtUp === 2);
    await publishMany(topic, "a", 0, 60);
    await eventually(() => fast.events.length === 60, 10_000, "fast reader");
    expect(slow.events.length).toBe(1);
    release();
    await eventually(() => slow.events.length === 60, 10_000, "slow reader");
    expect(slow.events.map((e) => e.data)).toEqual(fast.events.map((e) => e.data));
    expect(topic.calls.replay).toBeGreaterThanOrEqual(1); // it caught up by replay, not from memory
    expect(topic.calls.follow).toBe(1);
    ac.abort();
    hubs.close();
  });

  it("hub - a fresh hub serves a storm of resuming subscribers from one follower", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    await publishMany(real, "a", 0, 60);
    const cursor = (await collect(real.replay({ tenantId: "a" })))[9]!.cursor;
    const topic = spyTopic(real);
    const hubs = new HubRegistry();
    const ac = new AbortController();
    const readers = Array.from({ length: 50 }, () => reader(hubs.get(topic, "a"), { after: cursor, signal: ac.signal }));
    await eventually(() => readers.every((r) => r.events.length === 50), 10_000, "all caught up");
    for (const r of readers) expect(r.events.map((e) => e.data)).toEqual(Array.from({ length: 50 }, (_, i) => i + 10));
    await eventually(() => topic.calls.follow === 1);
    expect(topic.calls.replay).toBe(1); // the follower's backfill; no replay per subscriber
    ac.abort();
    hubs.close();
  });

  it("hub - caught_up progress fires once the replay reaches the live edge, with a watermark", async () => {
    const topic = fx.sync().topic<number>({ id: "feed" });
    await publishMany(topic, "a", 0, 3);
    await publishMany(topic, "b", 0, 3);
    const first = (await collect(topic.replay({ tenantId: "a" })))[0]!.cursor;
    const ac = new AbortController();
    const marks: string[] = [];
    const hub = new HubRegistry().get(topic, "a");
    const r = hub.subscribe({ after: first, signal: ac.signal, progress: { onCaughtUp: (c) => marks.push(c) } });
    const got: number[] = [];
    void (async () => {
      for await (const e of r) got.push(e.data);
    })();
    await eventually(() => marks.length === 1);
    expect(got).toEqual([1, 2]);
    expect(topic.cursorSequence(marks[0]!)).toBe(6); // the head, past tenant b's events
    ac.abort();
  });

  it("hub - invalid and foreign cursors fail from iteration", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "feed" });
    const other = sync.topic<number>({ id: "other" });
    const r = await other.publish({ data: 1 });
    expect((await failure(topic.hub().subscribe({ after: "nope" }))).code).toBe(ErrorCode.InvalidCursor);
    expect((await failure(topic.hub().subscribe({ after: r.cursor }))).code).toBe(ErrorCode.CursorMismatch);
    expect((await failure(topic.hub().subscribe({ after: topic.cursorAt(99) }))).code).toBe(ErrorCode.InvalidCursor);
  });

  it("hub - RetentionGapError only for a subscriber whose position retention overtook", async () => {
    const topic = fx.sync().topic<string>({ id: "small", maxPayloadBytes: 1024, retention: { maxBytes: 6 * 1024 } });
    const first = await topic.publish({ data: "x".repeat(700), tenantId: "a" });
    for (let i = 0; i < 12; i++) await topic.publish({ data: "x".repeat(700), tenantId: "a" });
    const err = await failure(topic.hub({ tenantId: "a" }).subscribe({ after: first.cursor }));
    expect(err).toBeInstanceOf(RetentionGapError);
    const head = await topic.head();
    const ac = new AbortController();
    const ok = reader(topic.hub({ tenantId: "a" }), { after: head, signal: ac.signal });
    await topic.publish({ data: "y", tenantId: "a" });
    await eventually(() => ok.events.length === 1);
    ac.abort();
  });

  it("hub - the follower rides out broker trouble: subscribers see no error and miss nothing", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    let failures = 2;
    const topic = spyTopic(real, {
      follow: (o) =>
        failures-- > 0
          ? {
              [Symbol.asyncIterator]: () => ({
                next: async (): Promise<IteratorResult<never>> => {
                  await new Promise((r) => setTimeout(r, 50));
                  throw new BrokerUnavailableError("injected");
                },
              }),
            }
          : real.follow(o),
    });
    const hubs = new HubRegistry();
    const ac = new AbortController();
    const a = reader(hubs.get(topic, "a"), { signal: ac.signal });
    await eventually(() => a.caughtUp === 1);
    await publishMany(real, "a", 0, 5);
    await eventually(() => a.events.length === 5, 10_000, "5 events after the retries");
    expect(a.events.map((e) => e.data)).toEqual([0, 1, 2, 3, 4]);
    expect(topic.calls.follow).toBe(3);
    ac.abort();
    hubs.close();
  });

  it("hub - hubMode tenant: a gap of the shared follower reaches every subscriber", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    const gapError = new RetentionGapError("injected", { requestedSequence: 1, firstAvailableSequence: 5 });
    const topic = spyTopic(real, {
      follow: (o) => ({
        async *[Symbol.asyncIterator]() {
          for await (const e of real.follow(o)) {
            yield e;
            if (e.data === 2) throw gapError;
          }
        },
      }),
    });
    const hubs = new HubRegistry({ hubMode: "tenant" });
    const a = reader(hubs.get(topic, "a"));
    const b = reader(hubs.get(topic, "a"));
    await eventually(() => a.caughtUp + b.caughtUp === 2);
    await publishMany(real, "a", 1, 3);
    await expect(a.done).rejects.toBe(gapError);
    await expect(b.done).rejects.toBe(gapError);
    expect(a.events.map((e) => e.data)).toEqual([1, 2]);
    expect(b.events.map((e) => e.data)).toEqual([1, 2]);
    expect(hubs.followerCount).toBe(0);
  });

  it("hub - hubMode topic: a gap of the topic's feed reaches the subscribers of every tenant, after what they had", async () => {
    const real = fx.sync().topic<number>({ id: "feed" });
    // The whole-topic feed reads seqs 1 (b) and 2 (a), then jumps to 5: 3 and 4 were removed unseen.
    const topic = spyTopic(real, {
      follow: (o) => ({
        async *[Symbol.asyncIterator]() {
          for await (const e of real.follow(o)) {
            yield e;
            if (e.streamSequence === 2) throw new RetentionGapError("injected", { requestedSequence: 2, firstAvailableSequence: 5 });
          }
        },
      }),
    });
    const hubs = new HubRegistry({ hubMode: "topic" });
    const a = reader(hubs.get(topic, "a"));
    const b = reader(hubs.get(topic, "b"));
    await eventually(() => a.caughtUp + b.caughtUp === 2);
    await real.publish({ data: 1, tenantId: "b" });
    await real.publish({ data: 2, tenantId: "a" });
    await expect(a.done).rejects.toMatchObject({ constructor: RetentionGapError, firstAvailableSequence: 5, requestedSequence: 2 });
    await expect(b.done).rejects.toMatchObject({ constructor: RetentionGapError, firstAvailableSequence: 5 });
    expect(a.events.map((e) => e.data)).toEqual([2]);
    expect(b.events.map((e) => e.data)).toEqual([1]);
    expect(hubs.followerCount).toBe(0);
    expect(hubs.feedCount).toBe(0);
    hubs.close();
  });
});
