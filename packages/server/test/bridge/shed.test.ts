/**
 * Storms without a cliff (issue 27, item 2): a crowd larger than the cap on sockets waiting for
 * `hello` is refused with a hint of when to come back (a `drain {retryAfterMs}` frame before
 * close 1013, or a 503's `Retry-After`), spread over the expected drain of the bridge's queue.
 * Real bridge, real sockets; each client follows the documented policy of protocol.md
 * ("Refused upgrades"): wait the hint plus its full-jitter backoff, reconnect, resume its hub
 * subscription from its cursor.
 */
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { backoffDelay, PROTOCOL_NAME } from "@tidemark/shared";
import { until } from "@tidemark/testing";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();

const CLIENTS = 300;
const TENANTS = 10;
const CAP = 20;
/** How long each hello holds its place (a token check against a key service). */
const AUTH_MS = Number(process.env.SHED_AUTH_MS ?? 150);
/** The bounds of a hint (protocol.md, "Refused upgrades"). */
const HINT_MIN_MS = 250;
const HINT_MAX_MS = 30_000;
/** The browser client's backoff (packages/client/src/backoff.ts). */
const BACKOFF = { baseMs: 500, maxMs: 15_000 };

interface Refusal {
  /** How the client was told: a drain frame before welcome, an HTTP status, or a bare close. */
  kind: "drain" | "http" | "close";
  /** The hint in ms (drain's retryAfterMs, Retry-After x 1000), when there was one. */
  hintMs?: number;
  code?: number;
}

interface StormClient {
  tenant: string;
  cursor: string;
  eventIds: string[];
  refusals: Refusal[];
  attempts: number;
  caughtUpAt?: number;
  ws?: WebSocket;
}

/** One attempt: resolves when the socket is refused (with what it was told) or subscribed. */
function attempt(url: string, token: string, client: StormClient, topic: string): Promise<Refusal | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, PROTOCOL_NAME);
    let welcomed = false;
    let drained: number | undefined;
    ws.on("error", () => undefined);
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      const retryAfter = res.headers["retry-after"];
      resolve({ kind: "http", code: res.statusCode ?? 0, ...(retryAfter ? { hintMs: Number(retryAfter) * 1000 } : {}) });
    });
    ws.on("open", () => ws.send(JSON.stringify({ type: "hello", v: 1, token })));
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; [k: string]: unknown };
      if (frame.type === "drain" && !welcomed) {
        drained = frame.retryAfterMs as number;
        ws.close();
      } else if (frame.type === "welcome") {
        welcomed = true;
        client.ws = ws;
        ws.send(JSON.stringify({ type: "subscribe", id: "s", topic, tenantId: client.tenant, mode: "hub", cursor: client.cursor }));
      } else if (frame.type === "event") {
        const event = frame.event as { eventId: string; cursor: string };
        client.eventIds.push(event.eventId);
        client.cursor = event.cursor;
      } else if (frame.type === "caught_up") {
        client.cursor = frame.cursor as string;
        client.caughtUpAt ??= Date.now();
        resolve(undefined);
      } else if (frame.type === "ping") {
        ws.send(JSON.stringify({ type: "pong" }));
      }
    });
    ws.on("close", (code) => {
      if (drained !== undefined) resolve({ kind: "drain", hintMs: drained, code });
      else if (!welcomed || client.caughtUpAt === undefined) resolve({ kind: "close", code });
    });
  });
}

/** The documented policy: the hint (if any) plus full-jitter backoff, then try again. */
async function run(url: string, token: string, client: StormClient, topic: string): Promise<void> {
  for (let n = 0; ; n++) {
    client.attempts++;
    const refusal = await attempt(url, token, client, topic);
    if (!refusal) return;
    client.refusals.push(refusal);
    const delay = (refusal.hintMs ?? 0) + backoffDelay(n + 1, BACKOFF);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** The kernel's count of handshakes dropped on full listen queues (whole machine; a figure only). */
function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n").filter((l) => l.startsWith("TcpExt:"));
    const names = lines[0]!.split(/\s+/);
    return Number(lines[1]!.split(/\s+/)[names.indexOf("ListenOverflows")]);
  } catch {
    return undefined;
  }
}

describe("bridge: shedding a crowd over the cap of sockets waiting for hello", () => {
  it("shed - 300 clients over a cap of 20: refusals carry a spread hint, every client resumes, every event arrives once and in order", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    const tenantOf = (i: number) => `t${i % TENANTS}`;
    for (let i = 0; i < CLIENTS; i++) fx.tokens.set(`u${i}`, { id: `u${i}`, tenants: [tenantOf(i)] });
    // Each hello holds its place for ~150 ms: with 20 places the bridge completes about 130
    // hellos a second, and 300 at once overflow the cap for about two seconds.
    const run_ = await fx.start(
      {
        topics: [{ topic, authorize: ownTenants }],
        limits: { maxUnauthenticated: CAP },
        logLevel: "warn",
        authenticate: async (token) => (await new Promise((r) => setTimeout(r, AUTH_MS)), fx.tokens.get(token)),
      },
      sync,
    );
    const published = new Map<string, string[]>(); // tenant -> event ids after the clients' cursor
    const publish = async (i: number) => {
      const tenantId = `t${i % TENANTS}`;
      const receipt = await topic.publish({ data: i, tenantId });
      published.get(tenantId)!.push(receipt.eventId);
    };
    for (let t = 0; t < TENANTS; t++) await topic.publish({ data: -1, tenantId: `t${t}` }); // before every cursor
    const start = await topic.head();
    for (let t = 0; t < TENANTS; t++) published.set(`t${t}`, []);
    for (let i = 0; i < 20; i++) await publish(i); // missed while away: replayed on resume

    const clients: StormClient[] = Array.from({ length: CLIENTS }, (_, i) => ({ tenant: tenantOf(i), cursor: start, eventIds: [], refusals: [], attempts: 0 }));
    const overflowsBefore = listenOverflows();
    const began = Date.now();
    const runs = clients.map((c, i) => run(run_.wsUrl, `u${i}`, c, "notes"));
    // Events published during the storm: every 50 ms for 2 s.
    for (let i = 20; i < 60; i++) {
      await publish(i);
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(runs);
    const resumedMs = Math.max(...clients.map((c) => c.caughtUpAt!)) - began;
    await until(
      "every client has every event of its tenant",
      () => clients.every((c) => c.eventIds.length >= published.get(c.tenant)!.length),
      20_000,
      50,
    );
    const deliveredMs = Date.now() - began;

    const refusals = clients.flatMap((c) => c.refusals);
    const hints = refusals.flatMap((r) => (r.hintMs === undefined ? [] : [r.hintMs]));
    const count = (kind: Refusal["kind"]) => refusals.filter((r) => r.kind === kind).length;
    const overflowsAfter = listenOverflows();
    console.log(
      `shed: ${CLIENTS} clients, cap ${CAP}: all subscribed and caught up in ${resumedMs} ms, every event in ${deliveredMs} ms; ` +
        `${refusals.length} refusals (drain ${count("drain")}, http ${count("http")}, bare close ${count("close")}), ` +
        `at most ${Math.max(...clients.map((c) => c.attempts))} attempts per client; hints ${Math.min(...hints)}..${Math.max(...hints)} ms ` +
        `(${new Set(hints).size} distinct); kernel ListenOverflows +${overflowsAfter !== undefined && overflowsBefore !== undefined ? overflowsAfter - overflowsBefore : "?"} (machine-wide)`,
    );

    // Every client ended subscribed, caught up, with its tenant's events once each, in order.
    for (const c of clients) {
      expect(c.caughtUpAt).toBeDefined();
      expect(c.ws?.readyState).toBe(WebSocket.OPEN);
      expect(c.eventIds).toEqual(published.get(c.tenant));
    }
    // The crowd was over the cap, and every refusal said when to come back.
    expect(refusals.length).toBeGreaterThan(0);
    expect(count("close")).toBe(0);
    expect(count("drain")).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.hintMs).toBeGreaterThanOrEqual(r.kind === "http" ? 1_000 : HINT_MIN_MS);
      expect(r.hintMs).toBeLessThanOrEqual(HINT_MAX_MS);
    }
    for (const r of refusals.filter((r) => r.kind === "drain")) expect(r.code).toBe(1013);
    for (const r of refusals.filter((r) => r.kind === "http")) expect(r.code).toBe(503);
    // Spread, not one value: the crowd comes back evenly.
    const drainHints = refusals.filter((r) => r.kind === "drain").map((r) => r.hintMs!);
    expect(new Set(drainHints).size).toBeGreaterThanOrEqual(Math.min(10, drainHints.length));
    expect(Math.max(...drainHints) - Math.min(...drainHints)).toBeGreaterThanOrEqual(100);
    for (const c of clients) c.ws?.terminate();
  });
});
