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
    // Each ping is measured from its own connection's open, not the test's start: opening 30
    // clients takes a while on a loaded machine, and a ping can come before the last one opens.
    const clients = await Promise.all(Array.from({ length: 30 }, () => run.connect("alice")));
    const firstPingAfterOpen = await Promise.all(
      clients.map(async (c) => {
        await c.next((f) => f.type === "ping", heartbeatMs * 3);
        return c.logAt[c.log.findIndex((f) => f.type === "ping")]! - c.openedAt;
      }),
    );
    // Due at a random point of [heartbeatMs / 2, heartbeatMs] after open: 30 such offsets span
    // far more than a quarter interval, while pings due at a fixed offset land within a sweep.
    const spread = Math.max(...firstPingAfterOpen) - Math.min(...firstPingAfterOpen);
    expect(spread).toBeGreaterThanOrEqual(heartbeatMs / 4);
    // None later than heartbeatMs after its open, plus a sweep and a loaded event loop; the
    // median (3/4 of the interval when due on time) catches pings due late without that slack.
    expect(Math.max(...firstPingAfterOpen)).toBeLessThan(heartbeatMs + heartbeatMs / 2);
    const median = [...firstPingAfterOpen].sort((a, b) => a - b)[firstPingAfterOpen.length / 2]!;
    expect(median).toBeLessThan(heartbeatMs);
  });
});
