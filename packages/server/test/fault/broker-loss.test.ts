/**
 * A bridge loses the broker while its WebSockets stay open (issue #17): a fault proxy sits
 * between one bridge process (and one publishing client) and every nats-server node, and is
 * cut as a blackhole — the TCP connections stay up, nothing passes. The other bridge is
 * connected directly. Same workload and accounting as the partition faults.
 */
import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FaultProxy, startTestCluster } from "@tidemark/testing";
import { startClusterScene, faultTopicOptions } from "./fixture.js";
import { countingWorker, type FaultEvent } from "./partition-workload.js";
import { LONG, runFault } from "./partition-run.js";

describe("fault: a bridge loses the broker", () => {
  it(`broker loss - the broker unreachable from a bridge for ${LONG ? 20 : 3} s while its WebSockets stay open: its subscribers resume with every event, nothing lost or doubled`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-broker-loss-"));
    // proxiedRoutes also sets no_advertise: the bridge keeps to the proxies' URLs.
    await using cluster = await startTestCluster({ proxiedRoutes: true });
    const proxies = await Promise.all(cluster.nodes.map((n) => FaultProxy.start({ targetPort: n.clientPort })));
    const viaProxies = proxies.map((p) => p.url).join(",");
    try {
      await using scene = await startClusterScene(cluster, dir, { tenants: 6, subscribers: 60, bridgeNats: [viaProxies] });
      const { worker, runs } = await countingWorker(scene.sync.topic<FaultEvent>(faultTopicOptions(3)), "broker-loss");
      try {
        const f = await runFault("broker-loss", {
          cluster, scene, runs,
          nearServers: proxies.map((p) => p.url),
          fault: async () => {
            for (const p of proxies) p.cut();
            await sleep(LONG ? 20_000 : 3_000);
            for (const p of proxies) p.heal();
          },
        });
        const victims = scene.subscribers.filter((s) => s.options.first === 0);
        console.log(`FIGURES broker-loss-subscribers ${JSON.stringify({ onLostBridge: victims.length, reconnected: victims.filter((s) => s.reconnects > 0).length, resubscribed: victims.filter((s) => s.resubscribes > 0).length, proxiedConnections: proxies.reduce((n, p) => n + p.accepted, 0) })}`);
        expect(f).toMatchObject({ readShort: false, ackedLost: 0, storedTwice: 0, untypedErrors: 0, handlerMissing: 0, holes: 0, duplicates: 0, resets: 0, bridgesUp: true, nodesUp: true });
        expect(f.inDoubtSaidSo).toBe(f.inDoubt);
        expect(f.subscribersExact).toBe(f.subscribers);
      } finally {
        await worker.stop({ timeoutMs: 5_000 }).catch(() => undefined);
      }
    } finally {
      await Promise.all(proxies.map((p) => p.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  }, LONG ? 300_000 : 120_000);
});
