import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, until } from "@tidemark/testing";
import { startClusterScene } from "./fixture.js";
import { tally } from "./subscriber.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-fault-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fault: the whole NATS cluster restarts", () => {
  it("fault - kill -9 of every NATS node, then a restart on the same stores: bridges and subscribers recover, nothing lost or doubled", async () => {
    await using cluster = await startTestCluster();
    await using scene = await startClusterScene(cluster, dir, { tenants: 10, subscribers: 200 });
    const { bridges, publisher, subscribers, tenants } = scene;

    const total = 300;
    const running = publisher.run(tenants, total, { concurrency: 2, pauseMs: 10 });
    await until("a third is acknowledged", () => publisher.ackedCount >= total / 3, 45_000);
    const ackedBefore = publisher.ackedCount;
    const downAt = Date.now();
    await Promise.all(cluster.nodes.map((_, i) => cluster.kill(i)));
    await new Promise((r) => setTimeout(r, 1_500)); // down for a while: publishes are retried meanwhile
    const ackedWhileDown = publisher.ackedCount - ackedBefore;
    await Promise.all(cluster.nodes.map((_, i) => cluster.start(i)));
    await cluster.ready();
    const clusterReadyMs = Date.now() - downAt;
    await until("publishes are acknowledged again", () => publisher.ackedCount > ackedBefore + ackedWhileDown, 45_000);
    const publishRecoveryMs = Date.now() - downAt;
    await running;
    const everyone = () => subscribers.every((s) => [...publisher.expected(s.options.tenantId)].every((id) => s.seen.has(id)));
    await until("every subscriber has every acknowledged event of its tenant", everyone, 45_000, 250);
    const deliveredAllMs = Date.now() - downAt;
    const counts = tally(subscribers, (s) => publisher.expected(s.options.tenantId));
    const expectedDeliveries = subscribers.reduce((n, s) => n + publisher.expected(s.options.tenantId).size, 0);
    console.log(
      "FIGURES cluster-restart " +
        JSON.stringify({
          subscribers: subscribers.length,
          published: publisher.published,
          acknowledged: publisher.ackedCount,
          ackedWhileDown,
          publishRetries: publisher.retries,
          expectedDeliveries,
          ...counts,
          reconnects: subscribers.reduce((n, s) => n + s.reconnects, 0),
          resubscribes: subscribers.reduce((n, s) => n + s.resubscribes, 0),
          clusterReadyMs,
          publishRecoveryMs,
          deliveredAllMs,
        }),
    );
    expect(expectedDeliveries).toBe(subscribers.length * (total / tenants.length));
    expect(counts.delivered).toBe(expectedDeliveries);
    expect(counts).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
    // The bridges rode it out: no process died.
    expect(bridges.every((b) => b.child.exitCode === null)).toBe(true);
  }, 120_000);
});
