/**
 * A bridge whose own event loop stalls (a long turn, a GC pause, a process starved of CPU on a
 * loaded machine) must not blame its clients for the silence it caused: while it did not turn,
 * it sent no ping and read no pong or hello. Issue 27: after kill -9 of every bridge, the
 * restarted bridges, starved by the resume storm, closed thousands of healthy sockets with 4408
 * and the clients' reconnects added to the storm.
 */
import { describe, it, expect } from "vitest";
import { ownTenants, useBridgeFixture } from "./fixture.js";
import { TestClient } from "./client.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["t0"] });

/** Holds the event loop (the bridge's and the clients': one process) for `ms`. */
function stallLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer, no socket read, no ping runs meanwhile
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("bridge: deadlines measured on a stalled event loop", () => {
  it("stall - a stall of the bridge's own loop longer than the heartbeat silence limit closes no socket; pings and pongs go on after it", async () => {
    const sync = fx.sync();
    const heartbeatMs = 200; // silent for more than 5 x 200 ms: closed 4408
    const run = await fx.start(
      { topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], heartbeatMs, limits: { unauthenticatedTimeMs: 400, maxConnectionsPerPrincipal: 100 } },
      sync,
    );
    const clients = await Promise.all(Array.from({ length: 10 }, () => run.connect("alice")));
    // Every client answers pings (TestClient does): they are healthy before the stall.
    await Promise.all(clients.map((c) => c.next((f) => f.type === "ping", 5 * heartbeatMs)));
    const closes: number[] = [];
    for (const c of clients) void c.closed.then((x) => closes.push(x.code));

    stallLoop(1_500);

    // After the stall the bridge pings again and every client answers: none was dropped.
    await settle(3 * heartbeatMs);
    const pingsBefore = clients.map((c) => c.log.filter((f) => f.type === "ping").length);
    await settle(4 * heartbeatMs);
    expect(closes).toEqual([]);
    clients.forEach((c, i) => expect(c.log.filter((f) => f.type === "ping").length).toBeGreaterThan(pingsBefore[i]!));
    expect(run.logs.filter((r) => r.msg === "connection closed" && String(r.reason ?? "").includes("heartbeat"))).toEqual([]);
  });

  it("stall - a socket that says nothing is still closed for silence once the loop turns again", async () => {
    const sync = fx.sync();
    const heartbeatMs = 200;
    const run = await fx.start(
      { topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], heartbeatMs, limits: { unauthenticatedTimeMs: 400, maxConnectionsPerPrincipal: 100 } },
      sync,
    );
    const client = await run.connect("alice");
    stallLoop(1_500);
    // It stops answering pings: its silence is its own, and it is closed about 5 intervals later.
    client.ws.removeAllListeners("message");
    const at = Date.now();
    const closed = await Promise.race([client.closed, settle(5_000).then(() => undefined)]);
    expect(closed).toMatchObject({ code: 4408, reason: "no heartbeat" });
    expect(Date.now() - at).toBeGreaterThanOrEqual(3 * heartbeatMs);
  });

  it("stall - a hello sent just before the bridge's loop stalled past the hello deadline is answered with welcome", async () => {
    const sync = fx.sync();
    const run = await fx.start(
      { topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], limits: { unauthenticatedTimeMs: 300, maxConnectionsPerPrincipal: 100 } },
      sync,
    );
    // Many sockets, so that the ticker's first slice after the stall reaches some of them
    // before the loop reads their hellos (a sweep is spread over several ticks).
    const clients = await Promise.all(Array.from({ length: 40 }, () => TestClient.open(run.wsUrl)));
    for (const c of clients) c.send({ type: "hello", v: 1, token: "alice" });
    stallLoop(1_000);
    const answers = await Promise.all(
      clients.map((c) => Promise.race([c.next((f) => f.type === "welcome" || f.type === "error", 5_000).then((f) => f.type), c.closed.then((x) => `closed ${x.code}`)])),
    );
    expect(answers.filter((a) => a !== "welcome")).toEqual([]);
  });
});
