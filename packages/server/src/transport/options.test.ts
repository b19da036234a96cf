import { describe, it, expect } from "vitest";
import type { Server } from "@nats-io/nats-core";
import { natsConnectionDefaults, rotateAwayFromLast, NATS_CONNECT_TIMEOUT_MS, NATS_MAX_PINGS_OUT, NATS_PING_INTERVAL_MS } from "./options.js";

const server = (listen: string) => ({ listen }) as Server;

describe("NATS connection defaults", () => {
  it("options - a silent server is dropped within seconds and a dial is bounded", () => {
    const o = natsConnectionDefaults();
    expect(o).toMatchObject({ pingInterval: NATS_PING_INTERVAL_MS, maxPingOut: NATS_MAX_PINGS_OUT, timeout: NATS_CONNECT_TIMEOUT_MS, maxReconnectAttempts: -1 });
    // Dropped after maxPingOut unanswered pings: at most (maxPingOut + 1) intervals of silence.
    expect(NATS_PING_INTERVAL_MS * (NATS_MAX_PINGS_OUT + 1)).toBeLessThanOrEqual(6_000);
    expect(typeof o.reconnectToServer).toBe("function");
    // Each connection gets its own reconnect memory.
    expect(natsConnectionDefaults().reconnectToServer).not.toBe(o.reconnectToServer);
  });

  it("options - a reconnect does not dial the server it just lost first when the pool has another", () => {
    const pick = rotateAwayFromLast();
    const a = server("a:1");
    const b = server("b:1");
    const c = server("c:1");
    expect(pick([a, b, c], null)).toBe(a); // first connect: the pool's choice
    // nats.js offers the server it was on again first: go to the next one.
    expect(pick([a, b, c], null)).toBe(b);
    expect(pick([b, c, a], null)).toBe(c);
    expect(pick([a, b, c], null)).toBe(a);
    // A pool of one: nothing else to try.
    const only = rotateAwayFromLast();
    expect(only([a], null)).toBe(a);
    expect(only([a], null)).toBe(a);
    expect(rotateAwayFromLast()([], null)).toBeNull();
  });
});
