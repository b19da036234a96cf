import { describe, it, expect } from "vitest";
import { decodeCursor } from "@tidemark/shared";
import type { Topic } from "../../src/index.js";
import { collect } from "../core/fixture.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });
const incarnation = (cursor: unknown) => decodeCursor(cursor).incarnation;
const data = (f: Record<string, unknown>) => (f.event as { data: number }).data;

async function publishMany(topic: Topic<number>, tenantId: string, from: number, count: number) {
  for (let i = from; i < from + count; i++) await topic.publish({ data: i, tenantId });
}

describe("bridge and re-created topics", () => {
  it("bridge - a cursor of a destroyed and re-created topic gets reset(cursor_mismatch), not a resume mid-stream", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 5);
    const old = (await topic.replay({ tenantId: "a" })[Symbol.asyncIterator]().next()).value!.cursor;
    await topic.destroy();
    const recreated = await topic.publish({ data: 100, tenantId: "a" });
    await publishMany(topic, "a", 101, 9); // the new stream is past the old cursor's sequence
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: old });
    const reset = await client.next((f) => f.type === "reset");
    expect(reset).toMatchObject({ id: "s", reason: "cursor_mismatch" });
    expect(String(reset.message)).toMatch(/destroyed and re-created/);
    expect(topic.cursorSequence(String(reset.head))).toBe(10);
    expect(incarnation(reset.head)).toBe(incarnation(recreated.cursor));
    await client.next((f) => f.type === "caught_up");
    await topic.publish({ data: 200, tenantId: "a" });
    const events = await client.events(String(hub), 1);
    expect(events.map(data)).toEqual([200]);
    expect(incarnation((events[0]!.event as { cursor: string }).cursor)).toBe(incarnation(recreated.cursor));
  });

  it("bridge - a re-creation by another process resets running subscriptions, which go on in the new stream", async () => {
    const sync = fx.sync({ hubs: { windowPollMs: 100 } });
    const elsewhere = fx.sync({ namespace: sync.namespace }).topic<number>({ id: "notes" });
    const topic = sync.topic<number>({ id: "notes" });
    await publishMany(topic, "a", 0, 3);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const live = await client.subscribe({ id: "live", topic: "notes", tenantId: "a" });
    await client.next((f) => f.type === "caught_up" && f.id === "live");
    const other = await run.connect("alice");
    const resumed = await other.subscribe({ id: "resumed", topic: "notes", tenantId: "a", cursor: topic.cursorAt(1) });
    await other.next((f) => f.type === "caught_up" && f.id === "resumed");
    expect((await other.events(String(resumed.hub), 2)).map(data)).toEqual([1, 2]);

    await elsewhere.destroy();
    await publishMany(elsewhere, "a", 100, 10);
    const newHead = await elsewhere.head();
    // Each subscription goes on after the head read at its reset (the re-creation may be noticed
    // while the ten events are being published): exactly the new stream's events after it.
    const after: number[][] = [];
    for (const [c, id] of [[client, "live"], [other, "resumed"]] as const) {
      const reset = await c.next((f) => f.type === "reset" && f.id === id);
      expect(reset).toMatchObject({ reason: "cursor_mismatch" });
      expect(incarnation(reset.head)).toBe(incarnation(newHead));
      await c.next((f) => f.type === "caught_up" && f.id === id);
      after.push((await collect(elsewhere.replay({ after: String(reset.head), tenantId: "a" }))).map((e) => e.data));
    }
    await elsewhere.publish({ data: 200, tenantId: "a" });
    const a = await client.events(String(live.hub), after[0]!.length + 1);
    const b = await other.events(String(resumed.hub), 2 + after[1]!.length + 1);
    expect(a.map(data)).toEqual([...after[0]!, 200]);
    expect(b.map(data)).toEqual([1, 2, ...after[1]!, 200]);
    for (const f of [...a, ...b.slice(2)]) expect(incarnation((f.event as { cursor: string }).cursor)).toBe(incarnation(newHead));
  });
});
