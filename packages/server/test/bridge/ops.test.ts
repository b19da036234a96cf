import { describe, it, expect } from "vitest";
import { BrokerUnavailableError, HubRegistry, type Topic } from "../../src/index.js";
import { spyTopic } from "../hub/fixture.js";
import { TestClient } from "./client.js";
import { bufferedAmounts, ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a", "b", "c"] });

describe("bridge operations", () => {
  it("bridge - a slow reader stays bounded, then gets every event in order", async () => {
    const sync = fx.sync();
    const topic = sync.topic<{ i: number; pad: string }>({ id: "big" });
    const maxBufferedBytes = 256 * 1024;
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxBufferedBytes } }, sync);
    const fast = await run.connect("alice");
    const slow = await run.connect("alice");
    const sf = await fast.subscribe({ id: "s", topic: "big", tenantId: "a" });
    const ss = await slow.subscribe({ id: "s", topic: "big", tenantId: "a" });
    await Promise.all([fast.next((f) => f.type === "caught_up"), slow.next((f) => f.type === "caught_up")]);
    // The slow client stops reading from its TCP socket: the server's send buffer fills.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const count = 1500;
    const pad = "p".repeat(16 * 1024);
    let maxBuffered = 0;
    const sampler = setInterval(() => {
      maxBuffered = Math.max(maxBuffered, ...bufferedAmounts(run.server));
    }, 5);
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => topic.publish({ data: { i: i + k, pad }, tenantId: "a" })));
    }
    await fast.events(String(sf.hub), count, 30_000);
    clearInterval(sampler);
    const metrics = run.bridge.metrics();
    expect(Number(/tidemark_bridge_backpressure_pauses_total (\d+)/.exec(metrics)![1])).toBeGreaterThan(0);
    // the server-side buffer reached the bound and stayed within it plus a frame or two
    expect(maxBuffered).toBeGreaterThan(maxBufferedBytes / 2);
    expect(maxBuffered).toBeLessThan(maxBufferedBytes + 64 * 1024);
    socket.resume();
    const got = await slow.events(String(ss.hub), count, 60_000);
    const seqs = got.map((f) => (f.event as { streamSequence: number }).streamSequence);
    expect(new Set(seqs).size).toBe(count);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(Number(/tidemark_bridge_replays_total (\d+)/.exec(run.bridge.metrics())![1])).toBeGreaterThan(0);
  });

  it("bridge - a hub subscription resumes by itself after broker trouble, losing nothing", async () => {
    const sync = fx.sync();
    const real = sync.topic<number>({ id: "notes" });
    await real.publish({ data: 0, tenantId: "a" });
    const start = await real.head();
    let failures = 4; // more than the hub's own head-read retries: the subscription must retry
    const hubs = new HubRegistry();
    const topic: Topic<number> = spyTopic(real, {
      head: () => (failures-- > 0 ? Promise.reject(new BrokerUnavailableError("injected: the broker did not answer")) : real.head()),
      hub: (o) => hubs.get(topic, o?.tenantId),
    });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: start });
    // published while the subscription cannot read the head and waits to retry
    await real.publish({ data: 1, tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await real.publish({ data: 2, tenantId: "a" });
    const events = await client.events(String(hub), 2);
    expect(events.map((f) => (f.event as { data: number }).data)).toEqual([1, 2]);
    expect(client.log.filter((f) => f.type === "unsubscribed" || f.type === "reset")).toEqual([]);
    expect(run.bridge.metrics()).toMatch(/^tidemark_bridge_subscription_retries_total [1-9]/m);
    hubs.close();
  });

  it("bridge - broker trouble a layer below already retried for the whole budget reaches the client at once: neither the hub nor the subscription retries it again", async () => {
    const sync = fx.sync();
    const real = sync.topic<number>({ id: "notes" });
    await real.publish({ data: 0, tenantId: "a" });
    const hubs = new HubRegistry();
    const spent = () => new BrokerUnavailableError("injected: the broker stayed away", { retriedMs: 60_000 });
    const topic: Topic<number> = spyTopic(real, {
      follow: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(spent()) }) }),
      hub: (o) => hubs.get(topic, o?.tenantId),
    });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    await client.subscribe({ id: "s", topic: "notes", tenantId: "a" });
    // Without the retry rule the follower retried this for ~30 s, then the subscription 15 times more.
    expect(await client.next((f) => f.type === "unsubscribed", 10_000)).toMatchObject({ id: "s", code: "BROKER_UNAVAILABLE", message: "injected: the broker stayed away" });
    expect((topic as typeof topic & { calls: { follow: number } }).calls.follow).toBe(1);
    expect(run.bridge.metrics()).toMatch(/^tidemark_bridge_subscription_retries_total 0$/m);
    hubs.close();
  });

  it("bridge - /healthz, /readyz and /metrics answer", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await topic.publish({ data: 1, tenantId: "a" });
    await client.events(String(hub), 1);
    expect(await (await fetch(`${run.server.url}/healthz`)).json()).toEqual({ status: "ok" });
    const ready = await fetch(`${run.server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", checks: { nats: true, jetstream: true } });
    const text = await (await fetch(`${run.server.url}/metrics`)).text();
    expect(text).toMatch(/^tidemark_bridge_connections 1$/m);
    expect(text).toMatch(/^tidemark_bridge_subscriptions\{mode="hub"\} 1$/m);
    expect(text).toMatch(/^tidemark_hub_followers 1$/m);
    expect(text).toMatch(/^tidemark_bridge_events_delivered_total 1$/m);
    expect(text).toMatch(/^tidemark_bridge_delivery_lag_seconds_count 1$/m);
    // The process's memory under prom-client's names, in bytes (this test process's own).
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    expect(gauge("process_resident_memory_bytes")).toBeGreaterThan(gauge("nodejs_heap_size_used_bytes"));
    expect(gauge("nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(gauge("nodejs_heap_size_used_bytes"));
    expect(gauge("nodejs_heap_size_used_bytes")).toBeGreaterThan(1024 * 1024);
    expect(gauge("nodejs_external_memory_bytes")).toBeGreaterThan(0);
  });

  it("bridge - drain tells clients to reconnect, closes with 1001, and /readyz turns 503", async () => {
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], drainSpreadMs: 500 }, sync);
    const client = await run.connect("alice");
    const draining = run.bridge.drain({ graceMs: 300 });
    const drain = await client.next((f) => f.type === "drain");
    expect(drain.retryAfterMs).toBeGreaterThanOrEqual(0);
    expect(drain.retryAfterMs).toBeLessThanOrEqual(500);
    expect((await client.closed).code).toBe(1001);
    await draining;
    expect((await fetch(`${run.server.url}/readyz`)).status).toBe(503);
    await expect(TestClient.open(run.wsUrl)).rejects.toMatchObject({ status: 503 });
  });

  for (const [hubMode, consumers] of [["topic", 1], ["tenant", 3]] as const) {
    it(`bridge - hub followers grow with (topic, tenant) pairs, not connections; hubMode ${hubMode}: ${consumers} consumer(s) for 3 tenants`, async () => {
      const sync = fx.sync({ hubs: { hubMode } });
      const topic: Topic<number> = sync.topic<number>({ id: "notes" });
      const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
      const clients = await Promise.all(Array.from({ length: 12 }, () => run.connect("alice")));
      await Promise.all(clients.map((c, i) => c.subscribe({ id: "s", topic: "notes", tenantId: ["a", "b", "c"][i % 3]! })));
      await Promise.all(clients.map((c) => c.next((f) => f.type === "caught_up")));
      const { consumersOf, eventually } = await import("../hub/fixture.js");
      // live-only subscriptions are caught up at once; the followers' consumers start meanwhile
      await eventually(async () => (await consumersOf(fx.nats, sync.namespace)) === consumers, 10_000, `${consumers} consumers`);
      await new Promise((r) => setTimeout(r, 200));
      expect(await consumersOf(fx.nats, sync.namespace)).toBe(consumers);
      expect(run.bridge.metrics()).toMatch(/^tidemark_hub_followers 3$/m);
      expect(run.bridge.metrics()).toMatch(new RegExp(`^tidemark_hub_feeds ${hubMode === "topic" ? 1 : 0}$`, "m"));
      expect(run.bridge.metrics()).toMatch(new RegExp(`^tidemark_jetstream_consumers ${consumers}$`, "m"));
    });
  }
});
