import { describe, it, expect } from "vitest";
import { WHOLE_TOPIC } from "../../src/index.js";
import { WebSocket } from "ws";
import { CloseCode, PROTOCOL_NAME } from "@tidemark/shared";
import { TestClient } from "./client.js";
import { ownTenants, useBridgeFixture, type User } from "./fixture.js";

const fx = useBridgeFixture();

describe("bridge auth", () => {
  it("bridge - a forbidden tenant is refused with FORBIDDEN and the connection stays", async () => {
    fx.tokens.set("bob", { id: "bob", tenants: ["b"] });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("bob");
    const err = await client.subscribe({ id: "s", topic: "notes", tenantId: "a" }).catch((e) => e.frame);
    expect(err).toMatchObject({ type: "error", id: "s", code: "FORBIDDEN" });
    await expect(client.subscribe({ id: "t", topic: "notes", tenantId: "b" })).resolves.toMatchObject({ type: "subscribed" });
  });

  it("bridge - true grants tenant-scoped subscribes only; a tenant-less one needs the whole-topic grant, in hub and live mode", async () => {
    fx.tokens.set("bob", { id: "bob", tenants: ["b"] });
    fx.tokens.set("root", { id: "root", tenants: [] });
    fx.tokens.set("odd", { id: "odd", tenants: [] });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    // Careless on purpose: says true to everything except what it grants root and odd.
    const lookalikes: unknown[] = [{ wholeTopic: "yes" }, { wholeTopic: 1 }, "wholeTopic", 1, { wholetopic: true }];
    let odd = 0;
    const authorize = (user: User, { tenantId }: { tenantId: string | undefined }) => {
      if (user.id === "root") return tenantId === undefined ? WHOLE_TOPIC : false;
      if (user.id === "odd") return lookalikes[odd++ % lookalikes.length] as boolean;
      return true;
    };
    const run = await fx.start({ topics: [{ topic, authorize }] }, sync);
    const bob = await run.connect("bob");
    for (const mode of ["hub", "live"] as const) {
      const refused = await bob.subscribe({ id: `all-${mode}`, topic: "notes", mode }).catch((e) => e.frame);
      expect(refused, mode).toMatchObject({ type: "error", code: "FORBIDDEN" });
      expect(String(refused.message)).toContain("wholeTopic");
    }
    await expect(bob.subscribe({ id: "a", topic: "notes", tenantId: "a" })).resolves.toMatchObject({ type: "subscribed" });
    const oddOne = await run.connect("odd");
    for (let i = 0; i < lookalikes.length; i++) {
      expect(await oddOne.subscribe({ id: `o${i}`, topic: "notes" }).catch((e) => e.frame), JSON.stringify(lookalikes[i])).toMatchObject({ code: "FORBIDDEN" });
    }
    const root = await run.connect("root");
    const { hub } = await root.subscribe({ id: "all", topic: "notes" });
    await root.next((f) => f.type === "caught_up");
    await topic.publish({ data: 1, tenantId: "a" });
    await topic.publish({ data: 2, tenantId: "b" });
    expect((await root.events(String(hub), 2)).map((f) => (f.event as { data: number }).data)).toEqual([1, 2]);
  });

  it("bridge - a whole-topic grant taken back ends the tenant-less subscription on reauthorize", async () => {
    const admin: User & { admin?: boolean } = { id: "admin", tenants: [], admin: true };
    fx.tokens.set("admin", admin);
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const authorize = (user: User & { admin?: boolean }, { tenantId }: { tenantId: string | undefined }) =>
      tenantId === undefined ? (user.admin === true ? { wholeTopic: true as const } : true) : true;
    const run = await fx.start({ topics: [{ topic, authorize }] }, sync);
    const client = await run.connect("admin");
    await client.subscribe({ id: "all", topic: "notes" });
    await client.subscribe({ id: "a", topic: "notes", tenantId: "a" });
    admin.admin = false; // true still grants the tenant "a", no longer the whole topic
    await run.bridge.reauthorize();
    expect(await client.next((f) => f.type === "unsubscribed")).toMatchObject({ id: "all", code: "FORBIDDEN" });
    expect(client.log.filter((f) => f.type === "unsubscribed")).toHaveLength(1);
  });

  it("bridge - only exposed topics are reachable", async () => {
    fx.tokens.set("bob", { id: "bob", tenants: ["b"] });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    sync.topic<number>({ id: "secret" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants, modes: ["hub"] }] }, sync);
    const client = await run.connect("bob");
    expect(await client.subscribe({ id: "s", topic: "secret", tenantId: "b" }).catch((e) => e.frame)).toMatchObject({ code: "TOPIC_NOT_FOUND" });
    expect(await client.subscribe({ id: "l", topic: "notes", tenantId: "b", mode: "live" }).catch((e) => e.frame)).toMatchObject({
      code: "TOPIC_NOT_FOUND",
    });
  });

  it("bridge - a bad token or no token closes with UNAUTHORIZED (4401)", async () => {
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }] }, sync);
    const bad = await TestClient.open(run.wsUrl);
    bad.send({ type: "hello", v: 1, token: "nope" });
    expect(await bad.next((f) => f.type === "error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect((await bad.closed).code).toBe(4401);
    const none = await TestClient.open(run.wsUrl);
    none.send({ type: "hello", v: 1 });
    expect((await none.closed).code).toBe(4401);
  });

  it("bridge - the token may come from a cookie, never from the URL", async () => {
    fx.tokens.set("carol", { id: "carol", tenants: ["c"] });
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }] }, sync);
    const withCookie = await TestClient.open(run.wsUrl, { headers: { cookie: "tidemark_token=carol" } });
    withCookie.send({ type: "hello", v: 1 });
    expect(await withCookie.next()).toMatchObject({ type: "welcome" });
    withCookie.close();
    const inUrl = await TestClient.open(`${run.wsUrl}?token=carol`);
    inUrl.send({ type: "hello", v: 1 });
    expect((await inUrl.closed).code).toBe(4401);
  });

  it("bridge - the origin allow-list refuses other origins at the upgrade", async () => {
    fx.tokens.set("carol", { id: "carol", tenants: ["c"] });
    const sync = fx.sync();
    const topics = [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }];
    const run = await fx.start({ topics, origins: ["https://app.example"] }, sync);
    await expect(TestClient.open(run.wsUrl, { origin: "https://evil.example" })).rejects.toMatchObject({ status: 403 });
    const ok = await TestClient.open(run.wsUrl, { origin: "https://app.example" });
    ok.close();
    const same = await fx.start({ topics }, sync); // default: same origin only
    await expect(TestClient.open(same.wsUrl, { origin: "https://evil.example" })).rejects.toMatchObject({ status: 403 });
    const port = new URL(same.wsUrl).port;
    (await TestClient.open(same.wsUrl, { origin: `http://127.0.0.1:${port}` })).close();
  });

  it("bridge - a refused origin is closed with 4403 and a reason for a client that offers the tidemark subprotocol (a browser sees no HTTP status)", async () => {
    fx.tokens.set("carol", { id: "carol", tenants: ["c"] });
    const sync = fx.sync();
    const topics = [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }];
    const run = await fx.start({ topics, origins: ["https://app.example"] }, sync);
    for (const wsUrl of [run.wsUrl]) {
      const ws = new WebSocket(wsUrl, PROTOCOL_NAME, { origin: "https://evil.example" });
      const frames: string[] = [];
      ws.on("message", (data) => frames.push(String(data)));
      ws.on("open", () => ws.send(JSON.stringify({ type: "hello", v: 1, token: "carol" })));
      const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
        ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
        ws.on("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      });
      expect(closed).toEqual({ code: CloseCode.OriginRefused, reason: "origin not allowed" });
      // Nothing it sent was read: no welcome, no error frame.
      expect(frames).toEqual([]);
    }
    // The tidemark client from an allowed origin still gets in.
    const ok = new WebSocket(run.wsUrl, PROTOCOL_NAME, { origin: "https://app.example" });
    await new Promise((resolve, reject) => (ok.on("open", resolve), ok.on("error", reject)));
    ok.close();
  });

  it("bridge - a revoked token ends every subscription and the connection", async () => {
    fx.tokens.set("dave", { id: "dave", tenants: ["d"] });
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }] }, sync);
    const client = await run.connect("dave");
    await client.subscribe({ id: "s", topic: "notes", tenantId: "d" });
    fx.tokens.delete("dave");
    await run.bridge.reauthenticate();
    expect(await client.next((f) => f.type === "unsubscribed")).toMatchObject({ id: "s", code: "UNAUTHORIZED" });
    expect((await client.closed).code).toBe(4401);
  });

  it("bridge - refresh re-authorizes: lost tenants end with FORBIDDEN, a refused token closes", async () => {
    fx.tokens.set("erin-1", { id: "erin", tenants: ["x", "y"] });
    fx.tokens.set("erin-2", { id: "erin", tenants: ["x"] });
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }] }, sync);
    const client = await run.connect("erin-1");
    await client.subscribe({ id: "x", topic: "notes", tenantId: "x" });
    await client.subscribe({ id: "y", topic: "notes", tenantId: "y" });
    client.send({ type: "refresh", token: "erin-2" });
    expect(await client.next((f) => f.type === "unsubscribed")).toMatchObject({ id: "y", code: "FORBIDDEN" });
    await client.next((f) => f.type === "refreshed");
    client.send({ type: "refresh", token: "revoked" });
    expect(await client.next((f) => f.type === "unsubscribed")).toMatchObject({ id: "x", code: "UNAUTHORIZED" });
    expect((await client.closed).code).toBe(4401);
  });

  it("bridge - an expired token ends subscriptions; without a refresh in time the socket closes", async () => {
    fx.tokens.set("fay", { id: "fay", tenants: ["f"], expiresAt: Date.now() + 700 });
    fx.tokens.set("fay-new", { id: "fay", tenants: ["f"] });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { unauthenticatedTimeMs: 800 } }, sync);
    const client = await run.connect("fay");
    await client.subscribe({ id: "s", topic: "notes", tenantId: "f" });
    expect(await client.next((f) => f.type === "unsubscribed")).toMatchObject({ id: "s", code: "UNAUTHORIZED", message: "the token expired" });
    // refresh within the window restores the connection
    client.send({ type: "refresh", token: "fay-new" });
    await client.next((f) => f.type === "refreshed");
    await expect(client.subscribe({ id: "s2", topic: "notes", tenantId: "f" })).resolves.toMatchObject({ type: "subscribed" });

    fx.tokens.set("gus", { id: "gus", tenants: ["g"], expiresAt: Date.now() + 300 });
    const late = await run.connect("gus");
    await late.next((f) => f.type === "error" && f.code === "UNAUTHORIZED", 5_000);
    expect((await late.closed).code).toBe(4408);
  });
});
