import { describe, it, expect } from "vitest";
import { TestClient } from "./client.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: Array.from({ length: 20 }, (_, i) => `t${i}`) });

async function started(limits: Record<string, number>) {
  const sync = fx.sync();
  const topic = sync.topic<number>({ id: "notes" });
  return fx.start({ topics: [{ topic, authorize: ownTenants }], limits }, sync);
}

describe("bridge limits and protocol", () => {
  it("bridge - a frame over maxFrameBytes gets LIMIT_EXCEEDED(frame_bytes) and closes 4413", async () => {
    const run = await started({ maxFrameBytes: 512 });
    const client = await run.connect("alice");
    client.send({ type: "ping", pad: "x".repeat(600) });
    expect(await client.next((f) => f.type === "error")).toMatchObject({ code: "LIMIT_EXCEEDED", limit: "frame_bytes" });
    expect((await client.closed).code).toBe(4413);
  });

  it("bridge - subscriptions per connection are limited; the connection stays", async () => {
    const run = await started({ maxSubscriptions: 2 });
    const client = await run.connect("alice");
    await client.subscribe({ id: "a", topic: "notes", tenantId: "t0" });
    await client.subscribe({ id: "b", topic: "notes", tenantId: "t1" });
    const err = await client.subscribe({ id: "c", topic: "notes", tenantId: "t2" }).catch((e) => e.frame);
    expect(err).toMatchObject({ code: "LIMIT_EXCEEDED", limit: "subscriptions", id: "c" });
    client.send({ type: "unsubscribe", id: "a" });
    await client.next((f) => f.type === "unsubscribed" && f.id === "a" && f.code === undefined);
    await expect(client.subscribe({ id: "c", topic: "notes", tenantId: "t2" })).resolves.toMatchObject({ type: "subscribed" });
  });

  it("bridge - the subscribe rate is limited with a retry hint", async () => {
    const run = await started({ subscribeRatePerSecond: 2 });
    const client = await run.connect("alice");
    for (let i = 0; i < 6; i++) client.send({ type: "subscribe", id: `s${i}`, topic: "notes", tenantId: `t${i}`, mode: "hub" });
    const err = await client.next((f) => f.type === "error");
    expect(err).toMatchObject({ code: "LIMIT_EXCEEDED", limit: "subscribe_rate" });
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(client.log.filter((f) => f.type === "subscribed")).toHaveLength(4); // the burst: twice the rate
  });

  it("bridge - connections per principal are limited (4429)", async () => {
    const run = await started({ maxConnectionsPerPrincipal: 2 });
    const a = await run.connect("alice");
    await run.connect("alice");
    const third = await TestClient.open(run.wsUrl);
    third.send({ type: "hello", v: 1, token: "alice" });
    expect(await third.next()).toMatchObject({ type: "error", code: "LIMIT_EXCEEDED", limit: "connections_per_principal" });
    expect((await third.closed).code).toBe(4429);
    a.close();
    await a.closed;
    await new Promise((r) => setTimeout(r, 50));
    await expect(run.connect("alice")).resolves.toBeDefined();
  });

  it("bridge - no hello within the unauthenticated time closes 4408", async () => {
    const run = await started({ unauthenticatedTimeMs: 300 });
    const client = await TestClient.open(run.wsUrl);
    expect(await client.next()).toMatchObject({ type: "error", code: "UNAUTHORIZED", limit: "unauthenticated_time" });
    expect((await client.closed).code).toBe(4408);
  });

  it("bridge - from half of maxUnauthenticated, silent sockets get the shorter hello deadline (4408), oldest first, until fewer than half wait", async () => {
    // The plain deadline is a minute: a close within the test is the shorter one.
    const run = await started({ maxUnauthenticated: 4, unauthenticatedTimeMs: 60_000, unauthenticatedTimeUnderPressureMs: 300 });
    const authenticated = await run.connect("alice"); // said hello: no longer waiting, never shed
    const silent: TestClient[] = [];
    for (let i = 0; i < 3; i++) silent.push(await TestClient.open(run.wsUrl)); // three of four: pressure
    for (const client of silent.slice(0, 2)) {
      expect(await client.next()).toMatchObject({ type: "error", code: "UNAUTHORIZED", limit: "unauthenticated_time" });
      expect((await client.closed).code).toBe(4408);
    }
    // One of four is no pressure: the youngest keeps the plain deadline.
    expect(silent[2]!.ws.readyState).toBe(silent[2]!.ws.OPEN);
    expect(authenticated.ws.readyState).toBe(authenticated.ws.OPEN);
    expect(run.bridge.metrics()).toMatch(/tidemark_bridge_unauthenticated_connections 1$/m);
    expect(run.bridge.metrics()).toMatch(/tidemark_bridge_rejected_total\{reason="unauthenticated_time"\} 2$/m);
    silent[2]!.ws.terminate();
  }, 20_000);

  it("bridge - malformed JSON, unknown frames and frames before hello close only that connection", async () => {
    const run = await started({});
    const bystander = await run.connect("alice");
    for (const bad of ["{not json", JSON.stringify({ type: "launch" }), JSON.stringify({ type: "subscribe", id: "x" }), "[1,2]"]) {
      const client = await run.connect("alice");
      client.send(bad);
      expect(await client.next((f) => f.type === "error")).toMatchObject({ code: "PROTOCOL_ERROR" });
      expect((await client.closed).code).toBe(4400);
    }
    const early = await TestClient.open(run.wsUrl);
    early.send({ type: "subscribe", id: "s", topic: "notes", mode: "hub" });
    expect((await early.closed).code).toBe(4400);
    const binary = await run.connect("alice");
    binary.ws.send(Buffer.from([1, 2, 3]));
    expect((await binary.closed).code).toBe(4400);
    bystander.send({ type: "ping" });
    await bystander.next((f) => f.type === "pong");
  });

  it("bridge - a client that asks for replies without reading is closed, memory stays bounded", async () => {
    const run = await started({ maxBufferedBytes: 1024 });
    const client = await run.connect("alice");
    const socket = (client.ws as unknown as { _socket: { pause(): void } })._socket;
    socket.pause(); // never reads again
    const id = "u".repeat(128);
    let sent = 0;
    while (client.ws.readyState === client.ws.OPEN && sent < 400_000) {
      for (let i = 0; i < 2_000; i++) client.send({ type: "unsubscribe", id }); // each answered by `unsubscribed`
      sent += 2_000;
      await new Promise((r) => setTimeout(r, 1));
      if (run.bridge.connectionCount === 0) break;
    }
    await (await import("../hub/fixture.js")).eventually(() => run.bridge.connectionCount === 0, 20_000, "closed");
    expect(run.logs.some((r) => r.msg === "frame handling failed")).toBe(false);
  });

  it("bridge - frames piling up behind a slow authorize close the connection", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const never = new Promise<boolean>(() => undefined);
    const run = await fx.start({ topics: [{ topic, authorize: () => never }] }, sync);
    const client = await run.connect("alice");
    for (let i = 0; i < 300; i++) client.send({ type: "subscribe", id: `s${i}`, topic: "notes", tenantId: "t0", mode: "hub" });
    expect(await client.next((f) => f.type === "error")).toMatchObject({ code: "PROTOCOL_ERROR" });
    expect((await client.closed).code).toBe(4400);
  });

  it("bridge - a silent connection is closed after five heartbeats (revision 1.5), one that answers stays", async () => {
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], heartbeatMs: 150 }, sync);
    const client = await run.connect("alice");
    client.ws.removeAllListeners("message"); // stops answering pings
    expect((await client.closed).code).toBe(4408);
    const alive = await run.connect("alice");
    await new Promise((r) => setTimeout(r, 600));
    expect(alive.ws.readyState).toBe(alive.ws.OPEN);
    expect(alive.log.some((f) => f.type === "ping")).toBe(true);
  });
});
