/**
 * The WebSocket upgrade as docs/bridge.md and docs/protocol.md describe it, on the bridge's own
 * app (served as is) and on an app that mounts it: the statuses of refused upgrades, the
 * Request the `authenticate` hook and an `origins` function get, and what an upgrade costs when
 * no hook reads its request.
 */
import { describe, it, expect, afterEach } from "vitest";
import { connect as tcpConnect } from "node:net";
import { Hono } from "hono";
import { WebSocket } from "ws";
import { CloseCode, PROTOCOL_NAME } from "@tidemark/shared";
import { countRequests } from "@tidemark/testing";
import { createNodeBridge, type Bridge, type BridgeOptions } from "../../src/index.js";
import { TestClient } from "./client.js";
import { serveForTest, useBridgeFixture, type Served as ServedBridge, type User } from "./fixture.js";

const fx = useBridgeFixture();
const servers: ServedBridge[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Sends a raw HTTP/1.1 request head and resolves with the response's status code. */
function rawStatus(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1", () => socket.write(head));
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed without a status: ${JSON.stringify(text)}`)));
  });
}

/** Sends a raw HTTP/1.1 request head and resolves with the response's head (status line and headers). */
function rawHead(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1", () => socket.write(head));
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve(text.slice(0, end + 2));
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed without a head: ${JSON.stringify(text)}`)));
  });
}

const upgradeHead = (method: string, path: string, port: number, extra = "", upgrade = "websocket") =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\n` +
  `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`;

type Served = "own app" | "mounted app";

/** A bridge served as is (`/ws`) or mounted in an app under `/rt` (`/rt/ws`). */
async function serve(served: Served, options: Partial<BridgeOptions<User>>): Promise<{ port: number; path: string; bridge: Bridge }> {
  const sync = fx.sync();
  const bridge = createNodeBridge<User>({
    topics: [{ topic: sync.topic({ id: "notes" }), authorize: () => true }],
    authenticate: (token) => fx.tokens.get(token),
    principalKey: (u) => u.id,
    logger: () => undefined,
    sync,
    ...options,
  });
  let app: Hono | undefined;
  if (served === "mounted app") {
    app = new Hono();
    app.route("/rt", bridge.app);
  }
  const server = await serveForTest(bridge, { drainGraceMs: 0, app });
  servers.push(server);
  return { port: server.port, path: served === "mounted app" ? "/rt/ws" : "/ws", bridge };
}

describe.each<Served>(["own app", "mounted app"])("bridge upgrade (%s)", (served) => {
  it("bridge - authenticate gets the upgrade Request at hello (URL, every header), later a rebuilt one with the kept headers", async () => {
    fx.tokens.set("erin", { id: "erin", tenants: [] });
    const seen: { isRequest: boolean; url: string; method: string; trace: string | null; agent: string | null }[] = [];
    const { port, path } = await serve(served, {
      authenticate: (token, request) => {
        seen.push({
          isRequest: request instanceof Request,
          url: request.url,
          method: request.method,
          trace: request.headers.get("x-trace"),
          agent: request.headers.get("user-agent"),
        });
        return fx.tokens.get(token);
      },
    });
    const client = await TestClient.connect(`ws://127.0.0.1:${port}${path}?room=7`, "erin", { headers: { "x-trace": "abc", "user-agent": "probe/1" } });
    expect(seen).toEqual([{ isRequest: true, url: `http://127.0.0.1:${port}${path}?room=7`, method: "GET", trace: "abc", agent: "probe/1" }]);
    client.send({ type: "refresh", token: "erin" });
    await client.next((f) => f.type === "refreshed");
    expect(seen[1]).toEqual({ isRequest: true, url: `http://127.0.0.1:${port}${path}?room=7`, method: "GET", trace: null, agent: "probe/1" });
    client.close();
  });

  it("bridge - an origins function gets the Origin and the upgrade Request; false refuses with 403", async () => {
    const calls: [string, string | null][] = [];
    const { port, path } = await serve(served, {
      origins: (origin, request) => {
        calls.push([origin, request.headers.get("x-app")]);
        return request.headers.get("x-app") === "yes";
      },
    });
    const url = `ws://127.0.0.1:${port}${path}`;
    await expect(TestClient.open(url, { origin: "https://app.example", headers: { "x-app": "no" } })).rejects.toMatchObject({ status: 403 });
    (await TestClient.open(url, { origin: "https://app.example", headers: { "x-app": "yes" } })).close();
    expect(calls).toEqual([
      ["https://app.example", "no"],
      ["https://app.example", "yes"],
    ]);
  });

  it("bridge - a refused Origin offering the tidemark subprotocol is accepted and closed with 4403 and its reason", async () => {
    const { port, path } = await serve(served, { origins: ["https://app.example"] });
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, PROTOCOL_NAME, { origin: "http://localhost:5173" });
    const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
      ws.on("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    expect(closed).toEqual({ code: CloseCode.OriginRefused, reason: "origin not allowed" });
  });

  it("bridge - refused upgrades: another path 404, another method 405, not websocket 426, a bad Host 500, draining 503", async () => {
    const { port, path, bridge } = await serve(served, {});
    expect(await rawStatus(port, upgradeHead("GET", `${path}x`, port))).toBe(404);
    expect(await rawStatus(port, upgradeHead("GET", `${path}/`, port))).toBe(404);
    expect(await rawStatus(port, upgradeHead("POST", path, port, "Content-Length: 0\r\n"))).toBe(405);
    expect(await rawStatus(port, upgradeHead("HEAD", path, port))).toBe(405);
    expect(await rawStatus(port, upgradeHead("GET", path, port, "", "h2c"))).toBe(426);
    expect(await rawStatus(port, upgradeHead("GET", path, port).replace(`Host: 127.0.0.1:${port}`, "Host: 127.0.0.1:99999"))).toBe(500);
    expect(await rawStatus(port, upgradeHead("GET", `${path}?q=1`, port))).toBe(101);
    void bridge.drain({ graceMs: 5_000 });
    expect(await rawStatus(port, upgradeHead("GET", path, port))).toBe(503);
  });

  it("bridge - over maxUnauthenticatedPerAddress the upgrade is refused with 503 and a Retry-After within the hello deadline", async () => {
    const { port, path } = await serve(served, { limits: { maxUnauthenticatedPerAddress: 1, unauthenticatedTimeMs: 4_000 } });
    const first = await TestClient.open(`ws://127.0.0.1:${port}${path}`);
    await expect(TestClient.open(`ws://127.0.0.1:${port}${path}`)).rejects.toMatchObject({ status: 503 });
    // The place frees when the waiting socket says hello or reaches its deadline: at most 4 s.
    const head = await rawHead(port, upgradeHead("GET", path, port));
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    const retryAfter = Number(/\r\nretry-after: (\d+)\r\n/i.exec(head)?.[1]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    first.close();
  });
});

describe("bridge upgrade cost", () => {
  it("bridge - an upgrade whose hooks never read the request builds no Request (resume storms pay per upgrade)", async () => {
    fx.tokens.set("finn", { id: "finn", tenants: [] });
    const { port, path } = await serve("own app", { origins: ["https://app.example"] });
    using requests = countRequests();
    const client = await TestClient.connect(`ws://127.0.0.1:${port}${path}`, "finn", { origin: "https://app.example", headers: { cookie: "a=b" } });
    client.send({ type: "subscribe", id: "s", topic: "notes", tenantId: "f", mode: "hub" });
    await client.next((f) => f.type === "caught_up");
    client.close();
    expect(requests.built).toBe(0);
  });
});
