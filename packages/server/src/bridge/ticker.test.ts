import { afterEach, describe, expect, it, vi } from "vitest";
import type { BridgeContext } from "./context.js";
import { startTicker } from "./ticker.js";
import { StallClock } from "./stall.js";

// Connections that record when the ticker visited them.
function contextOf(n: number, heartbeatMs: number, unauthenticatedTimeMs: number) {
  const visits = new Map<number, number[]>();
  const connections = new Set(
    Array.from({ length: n }, (_, i) => ({
      tick: (now: number) => visits.set(i, [...(visits.get(i) ?? []), now]),
    })),
  );
  const unauthenticated = { shedLate: () => undefined };
  const context = { connections, unauthenticated, clock: new StallClock(), options: { heartbeatMs, limits: { unauthenticatedTimeMs } } } as unknown as BridgeContext;
  return { context, connections, visits };
}

describe("ticker", () => {
  afterEach(() => vi.useRealTimers());

  it("ticker - a sweep visits a slice of the connections at each tick, every connection once per sweep", () => {
    vi.useFakeTimers();
    const { context, visits } = contextOf(1_000, 25_000, 10_000);
    const stop = startTicker(context);
    // The sweep is 1 s (a quarter of the 10 s hello deadline, at most 1 s): no tick visits all 1,000.
    const perTick: number[] = [];
    let seen = 0;
    for (let t = 0; t < 1_000; t += 10) {
      vi.advanceTimersByTime(10);
      const now = [...visits.values()].reduce((a, v) => a + v.length, 0);
      if (now > seen) perTick.push(now - seen);
      seen = now;
    }
    stop();
    expect(Math.max(...perTick)).toBeLessThanOrEqual(100);
    expect(visits.size).toBe(1_000);
    for (const v of visits.values()) expect(v.length).toBe(1);
  });

  it("ticker - connections that come and go during a sweep are visited or skipped, never twice", () => {
    vi.useFakeTimers();
    const { context, connections, visits } = contextOf(100, 25_000, 10_000);
    const stop = startTicker(context);
    vi.advanceTimersByTime(300);
    const [first] = connections;
    const gone = [...connections].slice(90); // not visited yet in this sweep
    for (const c of gone) connections.delete(c);
    connections.add({ tick: (now: number) => visits.set(-1, [...(visits.get(-1) ?? []), now]) });
    vi.advanceTimersByTime(700);
    stop();
    expect(visits.get(-1)?.length).toBe(1);
    expect([...visits.keys()].filter((k) => k >= 90)).toEqual([]);
    expect(first).toBeDefined();
    for (const [k, v] of visits) if (k >= 0) expect(v.length).toBe(1);
  });
});
