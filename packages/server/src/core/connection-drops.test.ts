import { describe, expect, it } from "vitest";
import { ConnectionDropped, ConnectionDrops } from "./connection-drops.js";

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
