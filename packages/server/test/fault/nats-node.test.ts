import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, until, type TestCluster } from "@tidemark/testing";
import { startClusterScene } from "./fixture.js";
import { tally } from "./subscriber.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-fault-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The node that leads the stream whose name contains `part` (from the monitoring endpoint). */
async function streamLeader(cluster: TestCluster, part: string): Promise<number> {
  const name = await until(`stream ${part} has a leader`, async () => {
    for (const n of cluster.nodes) {
      if (!n.server) continue;
      const jsz = (await (await fetch(new URL("/jsz?accounts=true&streams=true", n.server.monitorUrl))).json()) as {
        account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
      };
      for (const a of jsz.account_details ?? []) {
        for (const s of a.stream_detail ?? []) if (s.name.includes(part) && s.cluster?.leader) return s.cluster.leader;
      }
    }
    return undefined;
  });
  return cluster.nodes.findIndex((n) => n.name === name);
}

describe("fault: a NATS node dies", () => {
  it("fault - kill -9 of the stream leader while publishers and 1,000 subscribers run: every acknowledged event reaches every subscriber of its tenant exactly once", async () => {
    await using cluster = await startTestCluster();
    await using scene = await startClusterScene(cluster, dir, { tenants: 20, subscribers: 1_000 });
    const { bridges, publisher, subscribers, tenants, subscribeMs } = scene;

    const total = 600;
    const running = publisher.run(tenants, total, { concurrency: 4, pauseMs: 5 });
    await until("a third is acknowledged", () => publisher.ackedCount >= total / 3, 45_000);
    const victim = await streamLeader(cluster, "fault~events");
    expect(victim).toBeGreaterThanOrEqual(0);
    const killedAt = Date.now();
    const ackedBeforeKill = publisher.ackedCount;
    await cluster.kill(victim);
    await until("publishes are acknowledged again", () => publisher.ackTimes.some((t) => t > killedAt + 1), 45_000);
    await cluster.start(victim);
    await running;

    const everyone = () => subscribers.every((s) => [...publisher.expected(s.options.tenantId)].every((id) => s.seen.has(id)));
    await until("every subscriber has every acknowledged event of its tenant", everyone, 45_000, 250);
    const deliveredAllMs = Date.now() - killedAt;
    // The longest time without any acknowledgement after the kill: the publish outage.
    const after = [killedAt, ...publisher.ackTimes.filter((t) => t >= killedAt)];
    const publishOutageMs = Math.max(...after.slice(1).map((t, i) => t - after[i]!));
    const counts = tally(subscribers, (s) => publisher.expected(s.options.tenantId));
    const expectedDeliveries = subscribers.reduce((n, s) => n + publisher.expected(s.options.tenantId).size, 0);
    console.log(
      "FIGURES nats-node-kill " +
        JSON.stringify({
          subscribers: subscribers.length,
          bridges: bridges.length,
          tenants: tenants.length,
          published: publisher.published,
          acknowledged: publisher.ackedCount,
          ackedBeforeKill,
          publishRetries: publisher.retries,
          expectedDeliveries,
          ...counts,
          subscriberReconnects: subscribers.reduce((n, s) => n + s.reconnects, 0),
          resubscribes: subscribers.reduce((n, s) => n + s.resubscribes, 0),
          subscribeMs,
          publishOutageMs,
          deliveredAllMs,
        }),
    );
    expect(publisher.ackedCount).toBe(publisher.published);
    expect(expectedDeliveries).toBe(subscribers.length * (total / tenants.length));
    expect(counts.delivered).toBe(expectedDeliveries);
    expect(counts).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
  }, 150_000);
});
