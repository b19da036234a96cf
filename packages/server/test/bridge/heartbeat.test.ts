import { describe, it, expect } from "vitest";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["t0"] });

describe("bridge heartbeats", () => {
  it("bridge - connections opened together get their first ping spread over the interval, none later than heartbeatMs", async () => {
    const sync = fx.sync();
    const heartbeatMs = 2_000;
    // unauthenticatedTimeMs 400: the ticker sweeps every 100 ms, so a ping is due within 100 ms of its time
    const run = await fx.start(
      { topics: [{ topic: sync.topic({ id: "notes" }), authorize: ownTenants }], heartbeatMs, limits: { unauthenticatedTimeMs: 400, maxConnectionsPerPrincipal: 100 } },
      sync,
    );
    const opened = Date.now();
    const clients = await Promise.all(Array.from({ length: 30 }, () => run.connect("alice")));
    const firstPing = await Promise.all(
      clients.map((c) => new Promise<number>((resolve) => c.ws.on("message", (data) => JSON.parse(data.toString()).type === "ping" && resolve(Date.now())))),
    );
    const spread = Math.max(...firstPing) - Math.min(...firstPing);
    // A burst of connections (a reconnect storm) must not ping, and be answered, in one tick.
    expect(spread).toBeGreaterThanOrEqual(heartbeatMs / 4);
    expect(Math.max(...firstPing) - opened).toBeLessThan(heartbeatMs + 1_000);
  });
});
