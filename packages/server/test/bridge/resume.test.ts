import { describe, it, expect } from "vitest";
import type { Topic } from "../../src/index.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a", "b"] });

async function publishMany(topic: Topic<number>, tenantId: string, from: number, count: number) {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId });
}

describe("bridge resume", () => {
  it("bridge - a hub subscription without cursor is live-only and says caught_up at once", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 3);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s1", topic: "notes", tenantId: "a" });
    const caughtUp = await client.next((f) => f.type === "caught_up");
    expect(topic.cursorSequence(String(caughtUp.cursor))).toBe(3);
    await publishMany(topic, "a", 3, 2);
    const events = await client.events(String(hub), 2);
    expect(events.map((f) => (f.event as { data: number }).data)).toEqual([3, 4]);
  });

  it("bridge - a live-only subscribe right after the previous socket of the hub went away gets the next event under its own hub id", async () => {
    // The previous socket's group could still be starting when it left: its frames named the
    // hub id the socket had been given, which a newcomer of the same hub no longer knew.
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await topic.publish({ data: -1, tenantId: "a" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const missed: number[] = [];
    for (let i = 0; i < 20; i++) {
      const client = await run.connect("alice");
      const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a" });
      await client.next((f) => f.type === "caught_up");
      await topic.publish({ data: i, tenantId: "a" });
      const frame = await client.next((f) => f.type === "event");
      if (frame.hub !== hub) missed.push(i);
      client.ws.terminate();
    }
    expect(missed).toEqual([]);
  });

  it("bridge - resume from a cursor across a bridge restart loses and doubles nothing", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 5);
    const first = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const c1 = await first.connect("alice");
    const start = (await topic.replay({ tenantId: "a" })[Symbol.asyncIterator]().next()).value!.cursor;
    const s1 = await c1.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: start });
    const seen = await c1.events(String(s1.hub), 4);
    await c1.next((f) => f.type === "caught_up");
    await publishMany(topic, "a", 5, 3);
    seen.push(...(await c1.events(String(s1.hub), 7)).slice(4));
    const last = String((seen.at(-1)!.event as { cursor: string }).cursor);
    await first.server.close();
    await c1.closed;
    // published while no bridge runs
    await publishMany(topic, "a", 8, 4);
    await publishMany(topic, "b", 100, 3);
    const second = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const c2 = await second.connect("alice");
    const s2 = await c2.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: last });
    await c2.next((f) => f.type === "caught_up");
    await publishMany(topic, "a", 12, 2);
    const resumed = await c2.events(String(s2.hub), 6);
    const all = [...seen, ...resumed].map((f) => (f.event as { data: number }).data);
    expect(all).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(c2.log.filter((f) => f.type === "reset")).toEqual([]);
  });

  it("bridge - an invalid cursor gets reset(invalid_cursor) with the head and continues from it", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 3);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: "not-a-cursor" });
    const reset = await client.next((f) => f.type === "reset");
    expect(reset).toMatchObject({ id: "s", reason: "invalid_cursor" });
    expect(topic.cursorSequence(String(reset.head))).toBe(3);
    await client.next((f) => f.type === "caught_up");
    await publishMany(topic, "a", 3, 1);
    expect((await client.events(String(hub), 1)).map((f) => (f.event as { data: number }).data)).toEqual([3]);
  });

  it("bridge - a cursor past the head is invalid", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 2);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: topic.cursorAt(500) });
    expect(await client.next((f) => f.type === "reset")).toMatchObject({ reason: "invalid_cursor" });
  });

  it("bridge - a cursor of another topic gets reset(cursor_mismatch)", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const other = sync.topic<number>({ id: "other" });
    const foreign = await other.publish({ data: 1, tenantId: "a" });
    await publishMany(topic, "a", 0, 2);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: foreign.cursor });
    const reset = await client.next((f) => f.type === "reset");
    expect(reset).toMatchObject({ reason: "cursor_mismatch" });
    expect(topic.cursorSequence(String(reset.head))).toBe(2);
    await client.next((f) => f.type === "caught_up");
    await publishMany(topic, "a", 2, 1);
    expect(await client.events(String(hub), 1)).toHaveLength(1);
  });

  it("bridge - an expired cursor gets reset(retention_gap) and continues from the head", async () => {
    const sync = fx.sync();
    const topic = sync.topic<string>({ id: "small", maxPayloadBytes: 1024, retention: { maxBytes: 6 * 1024 } });
    const first = await topic.publish({ data: "x".repeat(700), tenantId: "a" });
    for (let i = 0; i < 12; i++) await topic.publish({ data: "x".repeat(700), tenantId: "a" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "small", tenantId: "a", cursor: first.cursor });
    const reset = await client.next((f) => f.type === "reset");
    expect(reset).toMatchObject({ id: "s", reason: "retention_gap" });
    expect(topic.cursorSequence(String(reset.head))).toBe(13);
    await client.next((f) => f.type === "caught_up");
    await topic.publish({ data: "new", tenantId: "a" });
    const [event] = await client.events(String(hub), 1);
    expect((event!.event as { data: string }).data).toBe("new");
    expect(run.bridge.metrics()).toMatch(/tidemark_bridge_resets_total\{reason="retention_gap"\} 1/);
  });

  it("bridge - event frames are the same bytes for every subscriber of a hub", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const a = await run.connect("alice");
    const b = await run.connect("alice");
    const sa = await a.subscribe({ id: "x", topic: "notes", tenantId: "a" });
    const sb = await b.subscribe({ id: "y", topic: "notes", tenantId: "a" });
    expect(sa.hub).toBe(sb.hub);
    await Promise.all([a.next((f) => f.type === "caught_up"), b.next((f) => f.type === "caught_up")]);
    await topic.publish({ data: 7, tenantId: "a" });
    const [ea] = await a.events(String(sa.hub), 1);
    const [eb] = await b.events(String(sb.hub), 1);
    expect(JSON.stringify(ea)).toBe(JSON.stringify(eb));
    expect(a.binary + b.binary).toBe(0); // text frames, even when sent from shared bytes
  });

  it("bridge - live mode delivers new events without a cursor", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "l", topic: "notes", tenantId: "a", mode: "live" });
    // live() has no caught-up point: publish until the first event arrives
    let n = 0;
    while (client.log.filter((f) => f.type === "event").length === 0 && n < 50) {
      await topic.publish({ data: n++, tenantId: "a" });
      await new Promise((r) => setTimeout(r, 50));
    }
    const events = client.log.filter((f) => f.type === "event");
    expect(events.length).toBeGreaterThan(0);
    expect(events[0]!.hub).toBe(hub);
  });
});
