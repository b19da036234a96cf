/**
 * ONE protocol suite for every runtime the bridge runs on (as hono's runtime tests share theirs):
 * subscribe, resume from a cursor, reset, authorization, live. Each runtime file calls
 * `protocolSuite(runtime)`; the runtime serves `app/options.ts` against a real nats-server, and
 * this process publishes to the same namespace over TCP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSync, type Sync, type Topic } from "../../src/index.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { TestClient } from "../bridge/client.js";
import { TOPIC } from "./app/options.js";
import type { Runtime, RunningBridge } from "./runtimes.js";

type Frame = Awaited<ReturnType<TestClient["next"]>>;
const data = (frames: Frame[]) => frames.map((f) => (f.event as { data: number }).data);

export function protocolSuite(runtime: Runtime): void {
  describe(`edge ${runtime.name}`, () => {
    let nats: TestNats;
    let sync: Sync;
    let topic: Topic<number>;
    let bridge: RunningBridge;
    const clients: TestClient[] = [];
    let tenants = 0;
    /** A tenant of alice no other test uses. */
    const tenant = () => `a-${runtime.name}-${tenants++}`;
    const connect = async (token: string) => {
      const client = await TestClient.connect(bridge.wsUrl, token);
      clients.push(client);
      return client;
    };
    const publish = async (tenantId: string, values: number[]) => {
      const receipts = [];
      for (const value of values) receipts.push(await topic.publish({ data: value, tenantId }));
      return receipts;
    };

    beforeAll(async () => {
      nats = await startTestNats();
      const namespace = uniqueNamespace("edge");
      sync = createSync({ namespace, nats: { servers: nats.url } });
      topic = sync.topic<number>(TOPIC);
      await topic.head(); // provisions the stream before the runtime's first subscribe
      bridge = await runtime.start({ natsUrl: nats.url, natsWsUrl: nats.wsUrl!, namespace });
    });
    afterEach(() => {
      for (const c of clients.splice(0)) c.ws.terminate();
    });
    afterAll(async () => {
      await bridge?.close();
      await sync?.close();
      await nats?.[Symbol.asyncDispose]();
    });

    it(`edge ${runtime.name} - subscribe: without a cursor the subscription is live-only, caught_up at the head, then new events in order`, async () => {
      const t = tenant();
      const [, last] = await publish(t, [1, 2]);
      const client = await connect("alice");
      const { hub } = await client.subscribe({ id: "s", topic: TOPIC.id, tenantId: t });
      const caughtUp = await client.next((f) => f.type === "caught_up");
      expect(topic.cursorSequence(String(caughtUp.cursor))).toBe(last!.streamSequence);
      await publish(t, [3, 4, 5]);
      expect(data(await client.events(String(hub), 3))).toEqual([3, 4, 5]);
    });

    it(`edge ${runtime.name} - resume: events after the cursor, then live ones, across a reconnect with no duplicate and no hole`, async () => {
      const t = tenant();
      const receipts = await publish(t, [1, 2, 3, 4, 5]);
      const first = await connect("alice");
      const s1 = await first.subscribe({ id: "s", topic: TOPIC.id, tenantId: t, cursor: receipts[1]!.cursor });
      const seen = await first.events(String(s1.hub), 3);
      await first.next((f) => f.type === "caught_up");
      await publish(t, [6]);
      seen.splice(0, seen.length, ...(await first.events(String(s1.hub), 4)));
      const last = String((seen.at(-1)!.event as { cursor: string }).cursor);
      first.close();
      await first.closed;
      await publish(t, [7, 8]); // while the client is away
      await publish(`a-elsewhere-${t}`, [100]); // another tenant: never delivered, never a gap
      const second = await connect("alice");
      const s2 = await second.subscribe({ id: "s", topic: TOPIC.id, tenantId: t, cursor: last });
      await second.next((f) => f.type === "caught_up");
      await publish(t, [9]);
      const resumed = await second.events(String(s2.hub), 3);
      expect([...data(seen), ...data(resumed)]).toEqual([3, 4, 5, 6, 7, 8, 9]);
      expect(second.log.filter((f) => f.type === "reset")).toEqual([]);
    });

    it(`edge ${runtime.name} - reset: an invalid or foreign cursor gets reset with the head and the subscription continues from it`, async () => {
      const t = tenant();
      const [, last] = await publish(t, [1, 2]);
      const client = await connect("alice");
      const invalid = await client.subscribe({ id: "bad", topic: TOPIC.id, tenantId: t, cursor: "not-a-cursor" });
      const reset = await client.next((f) => f.type === "reset" && f.id === "bad");
      expect(reset).toMatchObject({ reason: "invalid_cursor" });
      expect(topic.cursorSequence(String(reset.head))).toBe(last!.streamSequence);
      await client.next((f) => f.type === "caught_up" && f.id === "bad");
      await publish(t, [3]);
      expect(data(await client.events(String(invalid.hub), 1))).toEqual([3]);

      const other = sync.topic<number>({ id: "other" });
      const foreign = await other.publish({ data: 0, tenantId: t });
      const t2 = tenant();
      await client.subscribe({ id: "foreign", topic: TOPIC.id, tenantId: t2, cursor: foreign.cursor });
      expect(await client.next((f) => f.type === "reset" && f.id === "foreign")).toMatchObject({ reason: "cursor_mismatch" });
    });

    it(`edge ${runtime.name} - authorization: a bad token closes 4401; a forbidden tenant and an unexposed topic are refused, the connection stays`, async () => {
      const bad = await TestClient.open(bridge.wsUrl);
      clients.push(bad);
      bad.send({ type: "hello", v: 1, token: "mallory" });
      expect(await bad.next((f) => f.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
      expect((await bad.closed).code).toBe(4401);

      const bob = await connect("bob");
      const forbidden = await bob.subscribe({ id: "x", topic: TOPIC.id, tenantId: tenant() }).catch((e: { frame: Frame }) => e.frame);
      expect(forbidden).toMatchObject({ type: "error", id: "x", code: "FORBIDDEN" });
      const hidden = await bob.subscribe({ id: "y", topic: "other", tenantId: "b-1" }).catch((e: { frame: Frame }) => e.frame);
      expect(hidden).toMatchObject({ type: "error", id: "y", code: "TOPIC_NOT_FOUND" });
      await expect(bob.subscribe({ id: "z", topic: TOPIC.id, tenantId: "b-1" })).resolves.toMatchObject({ type: "subscribed" });
    });

    it(`edge ${runtime.name} - live: a live subscription gets new events without a cursor`, async () => {
      const t = tenant();
      const client = await connect("alice");
      const { hub } = await client.subscribe({ id: "l", topic: TOPIC.id, tenantId: t, mode: "live" });
      // live() has no caught-up point: publish until the first event arrives
      const deadline = Date.now() + 20_000;
      for (let n = 0; !client.log.some((f) => f.type === "event") && Date.now() < deadline; n++) {
        await topic.publish({ data: n, tenantId: t });
        await new Promise((r) => setTimeout(r, 100));
      }
      const events = client.log.filter((f) => f.type === "event");
      expect(events.length).toBeGreaterThan(0);
      expect(events[0]!.hub).toBe(hub);
      const values = data(events);
      expect(values).toEqual([...values].sort((a, b) => a - b));
    });

    it(`edge ${runtime.name} - hubs: two sockets on one (topic, tenant) share the hub and get the same event bytes`, async () => {
      const t = tenant();
      const a = await connect("alice");
      const b = await connect("alice");
      const sa = await a.subscribe({ id: "x", topic: TOPIC.id, tenantId: t });
      const sb = await b.subscribe({ id: "y", topic: TOPIC.id, tenantId: t });
      expect(sa.hub).toBe(sb.hub);
      await Promise.all([a.next((f) => f.type === "caught_up"), b.next((f) => f.type === "caught_up")]);
      await publish(t, [42]);
      const [ea] = await a.events(String(sa.hub), 1);
      const [eb] = await b.events(String(sb.hub), 1);
      expect(JSON.stringify(ea)).toBe(JSON.stringify(eb));
      const health = await fetch(`${bridge.httpUrl}/healthz`);
      expect(await health.json()).toEqual({ status: "ok" });
    });
  });
}
