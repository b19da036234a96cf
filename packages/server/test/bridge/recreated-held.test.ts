/**
 * A bridge subscription held across destroy + re-create of its topic, in each hub mode and by
 * this process or another one (the contract suite's seed -2009645363, as a direct test): the old
 * incarnation ends with `reset cursor_mismatch`, and the subscription goes on with the new
 * incarnation's events.
 */
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

describe("bridge: a held subscription across re-creations", () => {
  for (const hubMode of ["topic", "tenant"] as const) {
    it(`bridge - hubMode ${hubMode}: a subscription held on an empty topic across its re-creation by this process gets reset(cursor_mismatch), then the new incarnation's events`, async () => {
      // The contract suite's seed -2009645363: [recreate(by self), hold(ra, bridge), recreate(by self, under held subscriptions)].
      const sync = fx.sync({ hubs: { hubMode, windowPollMs: 100 } });
      const topic = sync.topic<number>({ id: "notes" });
      const saved = await topic.head(); // provisions; nothing published
      await topic.destroy();
      await topic.head();
      const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
      const client = await run.connect("alice");
      const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: saved });
      expect(await client.next((f) => f.type === "reset" && f.id === "s")).toMatchObject({ reason: "cursor_mismatch" });
      await client.next((f) => f.type === "caught_up" && f.id === "s");

      await topic.destroy();
      await topic.head();
      await publishMany(topic, "a", 100, 1);
      const reset = await client.next((f) => f.type === "reset" && f.id === "s", 10_000);
      expect(reset).toMatchObject({ reason: "cursor_mismatch" });
      const newHead = await topic.head();
      expect(incarnation(reset.head)).toBe(incarnation(newHead));
      await client.next((f) => f.type === "caught_up" && f.id === "s" && client.log.indexOf(f) > client.log.indexOf(reset));
      const after = (await collect(topic.replay({ after: String(reset.head), tenantId: "a" }))).map((e) => e.data);
      await publishMany(topic, "a", 200, 2);
      const events = await client.events(String(hub), after.length + 2, 10_000);
      expect(events.map(data)).toEqual([...after, 200, 201]);
      for (const f of events) expect(incarnation((f.event as { cursor: string }).cursor)).toBe(incarnation(newHead));
    });
  }

  for (const hubMode of ["topic", "tenant"] as const) {
    for (const by of ["self", "other"] as const) {
      it(`bridge - hubMode ${hubMode}: a subscription held across a re-creation by ${by === "self" ? "this process" : "another process"} gets reset(cursor_mismatch), then the new incarnation's events`, async () => {
        const sync = fx.sync({ hubs: { hubMode, windowPollMs: 100 } });
        const topic = sync.topic<number>({ id: "notes" });
        const elsewhere = by === "self" ? topic : fx.sync({ namespace: sync.namespace }).topic<number>({ id: "notes" });
        await publishMany(topic, "a", 0, 5);
        const old = (await collect(topic.replay({ tenantId: "a" })))[1]!.cursor;
        // First re-creation, before the subscription: its resume is a mismatch at once.
        await topic.destroy();
        await topic.head();
        await publishMany(topic, "a", 10, 3);
        const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
        const client = await run.connect("alice");
        const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: old });
        expect(await client.next((f) => f.type === "reset" && f.id === "s")).toMatchObject({ reason: "cursor_mismatch" });
        await client.next((f) => f.type === "caught_up" && f.id === "s");
        await publishMany(topic, "a", 20, 1);
        expect((await client.events(String(hub), 1)).map(data)).toEqual([20]);

        // Second re-creation, under the held subscription.
        if (by === "other") await elsewhere.head();
        await elsewhere.destroy();
        await elsewhere.head();
        if (by === "other") await topic.head();
        await publishMany(topic, "a", 100, 1);
        const reset = await client.next((f) => f.type === "reset" && f.id === "s");
        expect(reset).toMatchObject({ reason: "cursor_mismatch" });
        const newHead = await topic.head();
        expect(incarnation(reset.head)).toBe(incarnation(newHead));
        await client.next((f) => f.type === "caught_up" && f.id === "s");
        const after = (await collect(topic.replay({ after: String(reset.head), tenantId: "a" }))).map((e) => e.data);
        await publishMany(topic, "a", 200, 2);
        const events = (await client.events(String(hub), 1 + after.length + 2, 10_000)).slice(1);
        expect(events.map(data)).toEqual([...after, 200, 201]);
        for (const f of events) expect(incarnation((f.event as { cursor: string }).cursor)).toBe(incarnation(newHead));
      });
    }
  }
});
