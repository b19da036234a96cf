import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { createMeterRegistry } from "../../src/index.js";
import { ownTenants, useBridgeFixture } from "../bridge/fixture.js";

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });
const reader = new TestReader();

beforeAll(() => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => metrics.disable());

interface Point {
  attributes: Record<string, unknown>;
  value: number | { count: number; sum?: number };
}

async function points(name: string, from: MetricReader = reader): Promise<Point[]> {
  const { resourceMetrics }: { resourceMetrics: ResourceMetrics } = await from.collect();
  const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === name);
  return found.flatMap((m) => m.dataPoints as unknown as Point[]);
}
const sum = (ps: Point[], attrs: Record<string, unknown> = {}) =>
  ps
    .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.count), 0);

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("metrics", () => {
  it("metrics - publish latency, handler duration, attempts by outcome and dead letters through the app's MeterProvider", async () => {
    const topic = fx.sync().topic<number>({ id: "measured" });
    for (let n = 0; n < 3; n++) await topic.publish({ data: n });
    expect(sum(await points("tidemark_publish_duration_seconds"), { topic: "measured" })).toBe(3);
    // 0 succeeds; 1 fails once then succeeds; 2 always fails (dead letter after 2 attempts).
    const failed = new Set<number>();
    const worker = await topic.process({ consumer: "m", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [20] } }, (e) => {
      if (e.data === 2 || (e.data === 1 && !failed.has(1))) {
        failed.add(e.data);
        throw new Error("no");
      }
    });
    await until(async () => sum(await points("tidemark_worker_dead_letters"), { topic: "measured", consumer: "m" }) === 1, 10_000, "a dead letter");
    await worker.stop();
    const attempts = await points("tidemark_worker_attempts");
    expect(sum(attempts, { consumer: "m", outcome: "ack" })).toBe(2);
    expect(sum(attempts, { consumer: "m", outcome: "retry" })).toBe(2);
    expect(sum(attempts, { consumer: "m", outcome: "dead_letter" })).toBe(1);
    expect(sum(await points("tidemark_worker_handler_duration_seconds"), { consumer: "m" })).toBe(5);
  });

  it("metrics - hub followers are reported by the Sync's hubs, without a bridge and once with two", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "hubbed" });
    const stop = new AbortController();
    const subscribed = (async () => {
      for await (const _ of topic.hub({ tenantId: "a" }).subscribe({ signal: stop.signal })) void _;
    })().catch(() => undefined);
    await until(async () => sum(await points("tidemark_hub_followers")) === 1, 10_000, "one follower without a bridge");
    const bridges = [await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync), await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync)];
    expect(bridges[1]!.bridge.metrics()).toMatch(/^tidemark_hub_followers 1$/m);
    expect(sum(await points("tidemark_hub_followers"))).toBe(1);
    stop.abort();
    await subscribed;
  });

  it("metrics - the bridge reports its /metrics numbers under the same names", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await topic.publish({ data: 1, tenantId: "a" });
    await client.events(String(hub), 1);
    const text = run.bridge.metrics();
    expect(text).toMatch(/^tidemark_bridge_connections 1$/m);
    expect(sum(await points("tidemark_bridge_connections"))).toBe(1);
    expect(sum(await points("tidemark_bridge_subscriptions"), { mode: "hub" })).toBe(1);
    expect(sum(await points("tidemark_hub_followers"))).toBe(1);
    expect(sum(await points("tidemark_bridge_events_delivered"))).toBe(1);
    expect(sum(await points("tidemark_bridge_delivery_lag_seconds"))).toBe(1);
  });

  it("metrics - the delivery lag histogram counts every event sent to every socket of a hub, in /metrics and through OpenTelemetry", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "grouped" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const clients = await Promise.all([1, 2, 3].map(() => run.connect("alice")));
    const hubs = await Promise.all(clients.map((c) => c.subscribe({ id: "s", topic: "grouped", tenantId: "a" })));
    await Promise.all(clients.map((c) => c.next((f) => f.type === "caught_up")));
    const lagBefore = sum(await points("tidemark_bridge_delivery_lag_seconds"));
    const deliveredBefore = sum(await points("tidemark_bridge_events_delivered"));
    for (let n = 0; n < 4; n++) await topic.publish({ data: n, tenantId: "a" });
    await Promise.all(clients.map((c, i) => c.events(String(hubs[i]!.hub), 4)));
    const text = run.bridge.metrics();
    expect(text).toMatch(/^tidemark_bridge_events_delivered_total 12$/m);
    expect(text).toMatch(/^tidemark_bridge_delivery_lag_seconds_count 12$/m);
    expect(text).toMatch(/^tidemark_bridge_delivery_lag_seconds_bucket\{le="\+Inf"\} 12$/m);
    expect(sum(await points("tidemark_bridge_delivery_lag_seconds")) - lagBefore).toBe(12);
    expect(sum(await points("tidemark_bridge_events_delivered")) - deliveredBefore).toBe(12);
  });

  it("metrics - a Sync given its own meter registry records there, and so do its hubs, workers and a bridge on it; none of it reaches the global provider", async () => {
    const own = new TestReader();
    const meters = createMeterRegistry({ meterProvider: new MeterProvider({ readers: [own] }) });
    const sync = fx.sync({ meters });
    const topic = sync.topic<number>({ id: "apart" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "apart", tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await topic.publish({ data: 1, tenantId: "a" });
    await client.events(String(hub), 1);
    const worker = await topic.process({ consumer: "apart-w", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [20] } }, () => {
      throw new Error("no");
    });
    await until(async () => sum(await points("tidemark_worker_dead_letters", own), { consumer: "apart-w" }) === 1, 10_000, "a dead letter in the own registry");
    await worker.stop();

    expect(sum(await points("tidemark_publish_duration_seconds", own), { topic: "apart" })).toBe(1);
    expect(sum(await points("tidemark_worker_attempts", own), { consumer: "apart-w" })).toBe(2);
    expect(sum(await points("tidemark_bridge_connections", own))).toBe(1);
    expect(sum(await points("tidemark_hub_followers", own))).toBe(1);
    expect(sum(await points("tidemark_bridge_events_delivered", own))).toBe(1);
    expect(sum(await points("tidemark_bridge_delivery_lag_seconds", own))).toBe(1);

    expect(sum(await points("tidemark_publish_duration_seconds"), { topic: "apart" })).toBe(0);
    expect(sum(await points("tidemark_worker_attempts"), { consumer: "apart-w" })).toBe(0);
    expect(sum(await points("tidemark_worker_dead_letters"), { consumer: "apart-w" })).toBe(0);
  });
});
