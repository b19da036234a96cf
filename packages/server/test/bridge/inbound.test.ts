import { describe, it, expect } from "vitest";
import { TestClient } from "./client.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["t0", "t1"] });

describe("bridge inbound frames", () => {
  it("bridge - frames in fragments and frames read in one chunk are each unmasked with their own mask", async () => {
    const sync = fx.sync();
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }] }, sync);
    const client = await TestClient.open(run.wsUrl);
    const hello = JSON.stringify({ type: "hello", v: 1, token: "alice" });
    // a text message in three fragments, each masked with a mask of its own
    client.ws.send(hello.slice(0, 5), { fin: false });
    client.ws.send(hello.slice(5, 20), { fin: false });
    client.ws.send(hello.slice(20), { fin: true });
    await client.next((f) => f.type === "welcome");
    // two frames written together arrive in one chunk
    client.ws.send(JSON.stringify({ type: "subscribe", id: "a", topic: "notes", tenantId: "t0", mode: "hub" }));
    client.ws.send(JSON.stringify({ type: "subscribe", id: "b", topic: "notes", tenantId: "t1", mode: "hub" }));
    expect(await client.next((f) => f.type === "subscribed" && f.id === "a")).toMatchObject({ mode: "hub" });
    expect(await client.next((f) => f.type === "subscribed" && f.id === "b")).toMatchObject({ mode: "hub" });
    client.send({ type: "ping" });
    await client.next((f) => f.type === "pong");
  });
});

describe("bridge inbound order", () => {
  it("bridge - a ping sent behind a subscribe whose authorize is slow is answered after it", async () => {
    const sync = fx.sync();
    const slow = async (user: { tenants: string[] }, request: { tenantId: string | undefined }) => {
      await new Promise((r) => setTimeout(r, 200));
      return ownTenants(user as never, request);
    };
    const run = await fx.start({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: slow }] }, sync);
    const client = await run.connect("alice");
    client.send({ type: "ping" });
    await client.next((f) => f.type === "pong");
    client.send({ type: "subscribe", id: "a", topic: "notes", tenantId: "t0", mode: "hub" });
    client.send({ type: "ping" });
    await client.next((f) => f.type === "pong");
    const order = client.log.map((f) => f.type).filter((t) => t === "subscribed" || t === "pong");
    expect(order).toEqual(["pong", "subscribed", "pong"]);
  });
});
