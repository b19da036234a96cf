/**
 * Any cursor string is answered by `reset` (invalid_cursor) and the subscription goes on from the
 * head: a corrupted saved cursor must not close the connection (a client would reconnect with
 * the same cursor in a loop). Only a cursor that is not a string is a protocol error.
 */
import { describe, it, expect } from "vitest";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });

describe("bridge cursor strings", () => {
  it("bridge - an empty, an over-long or a garbage cursor string is reset(invalid_cursor), and the subscription continues from the head", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    for (let i = 0; i < 3; i++) await topic.publish({ data: i, tenantId: "a" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    // 1,025 and 10,000 characters: past the cursor length, within the 16 KiB frame limit.
    const bad = ["", "x".repeat(1025), `s6t.${"y".repeat(10_000)}`, "garbage", "\u0000\u{1F600}"];
    const hubs: string[] = [];
    for (const [i, cursor] of bad.entries()) {
      const { hub } = await client.subscribe({ id: `s${i}`, topic: "notes", tenantId: "a", cursor });
      const reset = await client.next((f) => f.type === "reset" && f.id === `s${i}`);
      expect(reset, JSON.stringify(cursor.slice(0, 20))).toMatchObject({ reason: "invalid_cursor" });
      expect(topic.cursorSequence(String(reset.head))).toBe(3);
      const caughtUp = await client.next((f) => f.type === "caught_up" && f.id === `s${i}`);
      expect(topic.cursorSequence(String(caughtUp.cursor))).toBe(3);
      hubs.push(String(hub));
      // One subscription per (topic, tenant, mode): end it before the next cursor.
      client.send({ type: "unsubscribe", id: `s${i}` });
      await client.next((f) => f.type === "unsubscribed" && f.id === `s${i}`);
    }
    const { hub } = await client.subscribe({ id: "last", topic: "notes", tenantId: "a", cursor: "" });
    await client.next((f) => f.type === "caught_up" && f.id === "last");
    await topic.publish({ data: 3, tenantId: "a" });
    expect((await client.events(String(hub), 1)).map((f) => (f.event as { data: number }).data)).toEqual([3]);
    expect(client.log.filter((f) => f.type === "error")).toEqual([]);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it("bridge - a cursor that is not a string is a protocol error (4400)", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    for (const cursor of [5, null, {}, ["s6t.x"], true]) {
      const client = await run.connect("alice");
      client.send({ type: "subscribe", id: "s", topic: "notes", tenantId: "a", mode: "hub", cursor });
      expect(await client.next((f) => f.type === "error")).toMatchObject({ code: "PROTOCOL_ERROR" });
      expect((await client.closed).code, JSON.stringify(cursor)).toBe(4400);
    }
  });

  it("bridge - the frame size limit still applies to a subscribe with a huge cursor (4413)", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    client.send({ type: "subscribe", id: "s", topic: "notes", tenantId: "a", mode: "hub", cursor: "x".repeat(20_000) });
    expect(await client.next((f) => f.type === "error")).toMatchObject({ code: "LIMIT_EXCEEDED", limit: "frame_bytes" });
    expect((await client.closed).code).toBe(4413);
  });
});
