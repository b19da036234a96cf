/**
 * Hostile users cannot cross what the bridge guards: a revocation is not overtaken by a slow
 * `authorize`, the per-principal limit holds across tokens and refreshes, the Origin check is
 * scheme, host and port against a trusted origin, and a token's `sub` must be a string.
 */
import { describe, it, expect } from "vitest";
import { SignJWT } from "jose";
import { createNodeBridge, tokenAuthenticator, type LogRecord } from "../../src/index.js";
import { InvalidArgumentError } from "@tidemark/shared";
import { TestClient } from "../bridge/client.js";
import { ownTenants, useBridgeFixture, type User } from "../bridge/fixture.js";

const fx = useBridgeFixture();

describe("hostile: crossing the bridge's guards", () => {
  it("cross - a subscribe whose authorize is in flight during a revocation is authorized again and refused", async () => {
    const carol: User = { id: "carol", tenants: ["t1"] };
    fx.tokens.set("carol", carol);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const sync = fx.sync();
    const topic = sync.topic<{ n: number }>({ id: "notes" });
    const authorize = async (user: User, request: { tenantId: string | undefined }) => {
      const allowed = ownTenants(user, request); // reads the rights now...
      if (++calls === 1) await gate; // ...and answers later
      return allowed;
    };
    const run = await fx.start({ topics: [{ topic, authorize }] }, sync);
    const client = await run.connect("carol");
    client.send({ type: "subscribe", id: "s", topic: "notes", tenantId: "t1", mode: "hub" });
    while (calls === 0) await new Promise((r) => setTimeout(r, 5));
    carol.tenants = []; // the rights change...
    await run.bridge.reauthorize(); // ...and the server says so while that authorize is in flight
    release();
    const reply = await client.next((f) => (f.type === "subscribed" || f.type === "error") && f.id === "s");
    expect(reply).toMatchObject({ type: "error", code: "FORBIDDEN" });
    await topic.publish({ data: { n: 1 }, tenantId: "t1" });
    await new Promise((r) => setTimeout(r, 500));
    expect(client.log.filter((f) => f.type === "event")).toEqual([]);
  });

  it("cross - a principal without id or sub is refused (INTERNAL, 4500) unless principalKey is set, and it is logged once", async () => {
    let n = 0;
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    // Each token's principal differs only by its expiry: its JSON would be a new key every time.
    const authenticate = (token: string) => ({ name: token, tenants: ["a"], expiresAt: Date.now() + 60_000 + n++ }) as unknown as User;
    const run = await fx.start({ topics: [{ topic, authorize: () => true }], authenticate, principalKey: undefined, limits: { maxConnectionsPerPrincipal: 1 } }, sync);
    for (let i = 0; i < 2; i++) {
      const c = await TestClient.open(run.wsUrl);
      c.send({ type: "hello", v: 1, token: "mallory" });
      expect(await c.next()).toMatchObject({ type: "error", code: "INTERNAL", message: expect.stringMatching(/principalKey/) });
      expect((await c.closed).code).toBe(4500);
    }
    expect(run.logs.filter((r) => r.level === "warn" && /principalKey/.test(r.msg))).toHaveLength(1);

    // With a stable id, a new token (another expiresAt) is the same principal.
    const keyed = await fx.start({ topics: [{ topic, authorize: () => true }], authenticate: (t) => ({ id: t, tenants: [], expiresAt: Date.now() + 60_000 + n++ }), principalKey: undefined, limits: { maxConnectionsPerPrincipal: 1 } }, sync);
    await keyed.connect("dave");
    const second = await TestClient.open(keyed.wsUrl);
    second.send({ type: "hello", v: 1, token: "dave" });
    expect((await second.closed).code).toBe(4429);
  });

  it("cross - a refresh to another principal checks that principal's connection limit (4429)", async () => {
    fx.tokens.set("alice", { id: "alice", tenants: ["a"] });
    fx.tokens.set("bob", { id: "bob", tenants: ["b"] });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], principalKey: undefined, limits: { maxConnectionsPerPrincipal: 1 } }, sync);
    const alice = await run.connect("alice");
    const bob = await run.connect("bob");
    bob.send({ type: "refresh", token: "alice" });
    expect(await bob.next((f) => f.type === "error" || f.type === "refreshed")).toMatchObject({ type: "error", code: "LIMIT_EXCEEDED", limit: "connections_per_principal" });
    expect((await bob.closed).code).toBe(4429);
    // bob's place was given back; alice's connection is untouched.
    await run.connect("bob");
    alice.send({ type: "ping" });
    await alice.next((f) => f.type === "pong");
  });

  it("cross - without origins, only a same-origin (scheme, host, port) browser on a loopback Host passes; DNS rebinding does not", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: () => true }] }, sync);
    const port = run.server.port;
    const refused = [
      { origin: `http://attacker.example:${port}`, headers: { host: `attacker.example:${port}` } }, // rebinding: both point at the attacker's name
      { origin: `https://127.0.0.1:${port}` }, // another scheme
      { origin: `http://127.0.0.1:${port + 1}` }, // another port
      { origin: "http://localhost" },
      { origin: "null" },
    ];
    for (const options of refused) {
      await expect(TestClient.open(run.wsUrl, options), JSON.stringify(options)).rejects.toMatchObject({ status: 403 });
    }
    for (const options of [{}, { origin: `http://127.0.0.1:${port}` }, { origin: `http://localhost:${port}`, headers: { host: `localhost:${port}` } }]) {
      (await TestClient.open(run.wsUrl, options)).ws.terminate();
    }
  });

  it("cross - an origins list compares scheme, host and port; a bad entry fails at creation; production without origins warns", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const run = await fx.start({ topics: [{ topic, authorize: () => true }], origins: ["https://app.example"] }, sync);
    for (const origin of ["http://app.example", "https://app.example:8443", "https://app.example.attacker.example"]) {
      await expect(TestClient.open(run.wsUrl, { origin }), origin).rejects.toMatchObject({ status: 403 });
    }
    for (const origin of ["https://app.example", "https://APP.example:443"]) (await TestClient.open(run.wsUrl, { origin })).ws.terminate();

    const base = { topics: [{ topic, authorize: () => true }], authenticate: () => ({ id: "x" }) };
    expect(() => createNodeBridge({ ...base, origins: ["app.example"] })).toThrow(InvalidArgumentError);
    expect(() => createNodeBridge({ ...base, origins: ["https://app.example/path"] })).toThrow(InvalidArgumentError);

    const logs: LogRecord[] = [];
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      const bridge = createNodeBridge({ ...base, logger: (r) => logs.push(r) });
      await bridge.close();
      const withOrigins = createNodeBridge({ ...base, origins: ["https://app.example"], logger: (r) => logs.push(r) });
      await withOrigins.close();
    } finally {
      process.env.NODE_ENV = before;
    }
    expect(logs.filter((r) => r.level === "warn" && /origins/.test(r.msg))).toHaveLength(1);
  });

  it("cross - a token whose sub is not a string is refused like a bad token (4401)", async () => {
    const secret = "a-test-secret-of-at-least-32-bytes!!";
    const sign = (sub: unknown) =>
      new SignJWT({ sub, tenants: ["a"] } as Record<string, unknown>)
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("1m")
        .sign(new TextEncoder().encode(secret));
    const authenticate = tokenAuthenticator({ key: secret });
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const run = await fx.start({ topics: [{ topic, authorize: () => true }], authenticate: authenticate as any, principalKey: undefined }, sync);
    for (const sub of [{ id: "alice" }, ["alice"], 42, ""]) {
      const c = await TestClient.open(run.wsUrl);
      c.send({ type: "hello", v: 1, token: await sign(sub) });
      expect(await c.next(), JSON.stringify(sub)).toMatchObject({ type: "error", code: "UNAUTHORIZED", message: "authentication failed" });
      expect((await c.closed).code).toBe(4401);
    }
    await run.connect(await sign("alice"));
  });
});
