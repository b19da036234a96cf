import { describe, expect, it } from "vitest";
import { ConnectionDown, ConnectionDropped, ConnectionDrops } from "./connection-drops.js";

describe("ConnectionDrops", () => {
  it("tells each watcher once at the next drop, with ConnectionDropped; forgotten ones are not told", () => {
    const drops = new ConnectionDrops();
    const told: unknown[] = [];
    const a = (reason: ConnectionDropped) => told.push(["a", reason]);
    const b = (reason: ConnectionDropped) => told.push(["b", reason]);
    drops.watch(a);
    drops.watch(b);
    drops.forget(b);
    expect(drops.size).toBe(1);
    drops.dropped();
    expect(told).toHaveLength(1);
    expect((told[0] as unknown[])[1]).toBeInstanceOf(ConnectionDropped);
    expect(drops.size).toBe(0);
    drops.dropped();
    expect(told).toHaveLength(1);
  });

  it("lost resolves at the drop and is a new promise after it", async () => {
    const drops = new ConnectionDrops();
    const first = drops.lost;
    let resolved = false;
    void first.then(() => (resolved = true));
    drops.dropped();
    await first;
    expect(resolved).toBe(true);
    expect(drops.lost).not.toBe(first);
  });
});

describe("ConnectionDrops state", () => {
  it("is down from a disconnect (a drop too) until the reconnect; back resolves then, and at once while up", async () => {
    const drops = new ConnectionDrops();
    expect(drops.down).toBe(false);
    await drops.back; // up: resolves at once
    const told: unknown[] = [];
    drops.watch((reason) => told.push(reason));
    drops.disconnected("127.0.0.1:4222");
    expect(drops.down).toBe(true);
    expect(told).toHaveLength(1);
    let back = false;
    const waiting = drops.back.then(() => (back = true));
    drops.dialing(); // the dial in progress
    drops.dialing(); // the first failed, a second one starts
    const reason = drops.notConnected();
    expect(reason).toBeInstanceOf(ConnectionDown);
    expect(reason).toMatchObject({ server: "127.0.0.1:4222", failedDials: 1 });
    expect(reason.message).toContain("127.0.0.1:4222");
    await Promise.resolve();
    expect(back).toBe(false);
    drops.reconnected();
    await waiting;
    expect(back).toBe(true);
    expect(drops.down).toBe(false);
  });

  it("a bare drop (a stale request) leaves the state up", () => {
    const drops = new ConnectionDrops();
    drops.dropped();
    expect(drops.down).toBe(false);
  });
});
