import { describe, it, expect } from "vitest";
import { CursorMismatchError, decodeCursor, InternalError, type TidemarkEvent } from "@tidemark/shared";
import { HubRegistry, type SharedHub, type Topic } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "../core/fixture.js";
import { eventually, spyTopic } from "./fixture.js";

const fx = useCoreFixture();
const incarnation = (cursor: string) => decodeCursor(cursor).incarnation;

async function publishMany(topic: Topic<number>, tenantId: string | undefined, from: number, count: number) {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId });
}

/** Reads a hub subscription in the background; `error` is where it failed, if it did. */
function reader<T>(topic: Topic<T>, tenantId: string, options: { after?: string; signal?: AbortSignal } = {}) {
  return readHub(topic.hub({ tenantId }) as SharedHub<T>, options);
}

function readHub<T>(hub: SharedHub<T>, options: { after?: string; signal?: AbortSignal } = {}) {
  const state = { events: [] as TidemarkEvent<T>[], caughtUp: 0, error: undefined as unknown, done: undefined as unknown as Promise<void> };
  state.done = (async () => {
    try {
      for await (const e of hub.subscribe({ ...options, progress: { onCaughtUp: () => state.caughtUp++ } })) state.events.push(e);
    } catch (err) {
      state.error = err;
    }
  })();
  return state;
}

describe("hub incarnations", () => {
  it("hub - a cursor of a destroyed and re-created topic is a CursorMismatchError, not a resume mid-stream", async () => {
    const topic = fx.sync().topic<number>({ id: "feed" });
    await publishMany(topic, "a", 0, 5);
    const old = (await collect(topic.replay({ tenantId: "a" })))[2]!.cursor; // sequence 3
    await topic.destroy();
    await publishMany(topic, "a", 100, 10); // re-created, past the old cursor's sequence
    const err = await failure(topic.hub({ tenantId: "a" }).subscribe({ after: old, signal: AbortSignal.timeout(5_000) }));
    expect(err).toBeInstanceOf(CursorMismatchError);
    expect(err.message).toMatch(/destroyed and re-created/);
  });

  it("hub - a cursor made by cursorAt() before first use stays valid in any incarnation", async () => {
    const sync = fx.sync();
    const first = sync.topic<number>({ id: "feed" });
    await publishMany(first, "a", 0, 3);
    await first.destroy();
    await publishMany(first, "a", 10, 5); // a new incarnation
    const fresh = sync.topic<number>({ id: "feed" });
    const cursor = fresh.cursorAt(2); // no incarnation yet
    const ac = new AbortController();
    const r = reader(fresh, "a", { after: cursor, signal: ac.signal });
    await eventually(() => r.events.length === 3 && r.caughtUp === 1, 10_000, "3 events");
    expect(r.events.map((e) => e.data)).toEqual([12, 13, 14]);
    ac.abort();
    await r.done;
    expect(r.error).toBeUndefined();
  });

  it("hub - a re-creation by another process reaches the running follower's subscribers as a mismatch", async () => {
    const ours = fx.sync({ hubs: { windowPollMs: 100 } });
    const theirs = fx.sync({ namespace: ours.namespace });
    const topic = ours.topic<number>({ id: "feed" });
    const other = theirs.topic<number>({ id: "feed" });
    await publishMany(topic, "a", 0, 3);
    const ac = new AbortController();
    const live = reader(topic, "a", { signal: ac.signal });
    const resumed = reader(topic, "a", { after: topic.cursorAt(1), signal: ac.signal });
    await eventually(() => live.caughtUp === 1 && resumed.caughtUp === 1, 10_000, "both caught up");
    await publishMany(topic, "a", 3, 1);
    await eventually(() => live.events.length === 1 && resumed.events.length === 3, 10_000, "events before");
    const old = resumed.events.at(-1)!.cursor;

    await other.destroy();
    await publishMany(other, "a", 100, 10); // past every old sequence
    const newer = (await collect(other.replay({ tenantId: "a" }))).at(-1)!.cursor;

    await eventually(() => live.error !== undefined && resumed.error !== undefined, 10_000, "both failed");
    for (const r of [live, resumed]) {
      expect(r.error).toBeInstanceOf(CursorMismatchError);
      expect((r.error as Error).message).toMatch(/destroyed and re-created/);
      // Nothing of the new incarnation was handed out under an old position.
      expect(r.events.every((e) => e.data < 100)).toBe(true);
    }
    // An old cursor is refused; new subscribers get the new incarnation's cursors.
    expect(await failure(topic.hub({ tenantId: "a" }).subscribe({ after: old }))).toBeInstanceOf(CursorMismatchError);
    const again = reader(topic, "a", { signal: ac.signal });
    const resumedNew = reader(topic, "a", { after: other.cursorAt(6), signal: ac.signal });
    await eventually(() => again.caughtUp === 1 && resumedNew.caughtUp === 1, 10_000, "new subscribers caught up");
    await publishMany(other, "a", 200, 2);
    await eventually(() => again.events.length === 2 && resumedNew.events.length === 6, 10_000, "new events");
    expect(again.events.map((e) => e.data)).toEqual([200, 201]);
    expect(resumedNew.events.map((e) => e.data)).toEqual([106, 107, 108, 109, 200, 201]);
    for (const e of [...again.events, ...resumedNew.events]) expect(incarnation(e.cursor)).toBe(incarnation(newer));
    ac.abort();
    await Promise.all([again.done, resumedNew.done]);
    expect(again.error ?? resumedNew.error).toBeUndefined();
  });

  for (const hubMode of ["topic", "tenant"] as const) {
    for (const by of ["self", "other"] as const) {
      it(`hub - hubMode ${hubMode}: a follow that fails because its stream was destroyed under it (re-created by ${by === "self" ? "this process" : "another process"}) ends its subscribers with CursorMismatchError; a fresh subscriber gets the new incarnation`, async () => {
        // The contract suite's seed -2009645363: the stream is destroyed between the follow's
        // window read and its consumer's creation, and nats.js says "stream not found". The
        // follow is held back until the topic was destroyed and re-created, then fails with that
        // error (from the real run); windowPollMs is long so only the failure can tell the hub.
        const sync = fx.sync({ hubs: { hubMode } });
        const real = sync.topic<number>({ id: "feed" });
        const elsewhere = by === "self" ? real : fx.sync({ namespace: sync.namespace }).topic<number>({ id: "feed" });
        let recreate!: () => void;
        const recreatedNow = new Promise<void>((r) => (recreate = r));
        let follows = 0;
        const topic = spyTopic(real, {
          follow: (o) =>
            ++follows > 1
              ? real.follow(o)
              : {
                  async *[Symbol.asyncIterator]() {
                    await recreatedNow;
                    yield* [];
                    throw new InternalError('topic "feed" failed: stream not found');
                  },
                },
        });
        await real.head();
        const hubs = new HubRegistry({ hubMode, windowPollMs: 60_000 });
        const ac = new AbortController();
        const held = readHub(hubs.get(topic, "a"), { signal: ac.signal });
        await eventually(() => held.caughtUp === 1, 10_000, "caught up");
        if (by === "other") await elsewhere.head();
        await elsewhere.destroy();
        await elsewhere.head();
        if (by === "other") await real.head();
        recreate();
        await eventually(() => held.error !== undefined, 10_000, "the held subscriber failed");
        expect(held.error).toBeInstanceOf(CursorMismatchError);
        expect(held.events).toEqual([]);
        const head = await real.head();
        const fresh = readHub(hubs.get(topic, "a"), { after: head, signal: ac.signal });
        await eventually(() => fresh.caughtUp === 1, 10_000, "fresh caught up");
        await publishMany(real, "a", 200, 2);
        await eventually(() => fresh.events.length === 2, 10_000, "new events");
        expect(fresh.events.map((e) => e.data)).toEqual([200, 201]);
        for (const e of fresh.events) expect(incarnation(e.cursor)).toBe(incarnation(head));
        ac.abort();
        await fresh.done;
        expect(fresh.error).toBeUndefined();
        hubs.close();
      });
    }
  }
});
