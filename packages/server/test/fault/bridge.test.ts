import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, until } from "@tidemark/testing";
import { startClusterScene } from "./fixture.js";
import { tally } from "./subscriber.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-fault-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fault: a bridge process dies", () => {
  it("fault - kill -9 of a bridge: its clients reconnect to another bridge and resume from their cursors, nothing lost or doubled", async () => {
    await using cluster = await startTestCluster();
    await using scene = await startClusterScene(cluster, dir, { tenants: 10, subscribers: 400 });
    const { bridges, publisher, subscribers, tenants } = scene;
    const onVictim = subscribers.filter((s) => s.bridge === 0);
    expect(onVictim.length).toBe(200);

    const total = 400;
    const running = publisher.run(tenants, total, { concurrency: 2, pauseMs: 10 });
    await until("a quarter is acknowledged", () => publisher.ackedCount >= total / 4, 45_000);
    const killedAt = Date.now();
    await bridges[0]!.kill();
    expect(bridges[0]!.child.signalCode).toBe("SIGKILL");
    await until("the victim's clients are on the other bridge", () => onVictim.every((s) => s.connected && s.bridge === 1), 30_000);
    const reconnectedMs = Date.now() - killedAt;
    await running;
    const everyone = () => subscribers.every((s) => [...publisher.expected(s.options.tenantId)].every((id) => s.seen.has(id)));
    await until("every subscriber has every acknowledged event of its tenant", everyone, 45_000, 250);
    const deliveredAllMs = Date.now() - killedAt;
    const counts = tally(subscribers, (s) => publisher.expected(s.options.tenantId));
    const expectedDeliveries = subscribers.reduce((n, s) => n + publisher.expected(s.options.tenantId).size, 0);
    console.log(
      "FIGURES bridge-kill " +
        JSON.stringify({
          subscribers: subscribers.length,
          movedSubscribers: onVictim.length,
          published: publisher.published,
          acknowledged: publisher.ackedCount,
          expectedDeliveries,
          ...counts,
          reconnects: subscribers.reduce((n, s) => n + s.reconnects, 0),
          reconnectedMs,
          deliveredAllMs,
        }),
    );
    expect(onVictim.every((s) => s.reconnects >= 1)).toBe(true);
    expect(expectedDeliveries).toBe(subscribers.length * (total / tenants.length));
    expect(counts.delivered).toBe(expectedDeliveries);
    expect(counts).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
  }, 120_000);
});
