/**
 * A node's disk full (issue 29, item 4; Jepsen's disk faults): a 3-node cluster, an R3 topic
 * under one-shot publishers of 8 KiB events and `follow()` readers. One follower's store is
 * moved onto a small tmpfs (a real ENOSPC, not JetStream's own `max_file_store`), which the
 * load fills. Publishing must go on through the two other nodes; then the tmpfs is grown, the
 * node restarted, made the stream's leader and read through. Nothing acknowledged may be lost,
 * nothing stored twice, every reader exact. Mounting needs root (as on the CI machine);
 * elsewhere the test says so and passes without the fault.
 */
import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { monitor, startTestCluster, uniqueNamespace, until } from "@tidemark/testing";
import { createSync } from "../../src/index.js";
import { faultTopicOptions } from "./fixture.js";
import { streamLeader } from "./partition-run.js";
import { OneShotLoad, makeLeader } from "./one-shot-load.js";
import type { FaultEvent } from "./partition-workload.js";

const MiB = 1024 ** 2;
const mount = (...args: string[]) => spawnSync("mount", args, { stdio: "pipe" }).status === 0;

describe("fault: a node's disk full", () => {
  it("disk full - a follower's store on a full tmpfs under load: publishing goes on, the node recovers once the disk grows; nothing acknowledged lost or doubled, readers exact", async (ctx) => {
    const probe = mkdtempSync(join(tmpdir(), "tidemark-tmpfs-"));
    const canMount = mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", probe);
    if (canMount) spawnSync("umount", [probe]);
    rmSync(probe, { recursive: true, force: true });
    if (!canMount) {
      console.log("FIGURES disk-full {\"skipped\":\"cannot mount a tmpfs (not root)\"}");
      ctx.skip();
      return;
    }
    await using cluster = await startTestCluster();
    const namespace = uniqueNamespace();
    const sync = createSync({ namespace, nats: { servers: cluster.urls }, requestTimeoutMs: 2_000 });
    const admin = await connect({ servers: cluster.urls });
    let mounted: string | undefined;
    try {
      const jsm = await jetstreamManager(admin);
      const topic = sync.topic<FaultEvent>(faultTopicOptions(3));
      await topic.publish({ data: { n: -1, p: "warmup" }, tenantId: "warmup" });
      const stream = `TMEV_${namespace}_fault~events`;

      // One follower's store onto a tmpfs with 3 MiB free: stop it, copy, mount, copy back, start.
      const victim = ((await streamLeader(cluster, stream)) + 1) % 3;
      const node = cluster.nodes[victim]!;
      await cluster.stop(victim);
      const saved = mkdtempSync(join(tmpdir(), "tidemark-store-"));
      cpSync(node.dataDir, saved, { recursive: true });
      const used = Number(spawnSync("du", ["-sb", node.dataDir], { encoding: "utf8" }).stdout.split("\t")[0]);
      const size = Math.ceil((used + 3 * MiB) / MiB);
      rmSync(node.dataDir, { recursive: true, force: true });
      spawnSync("mkdir", ["-p", node.dataDir]);
      expect(mount("-t", "tmpfs", "-o", `size=${size}m`, "tmpfs", node.dataDir)).toBe(true);
      mounted = node.dataDir;
      cpSync(saved, node.dataDir, { recursive: true });
      rmSync(saved, { recursive: true, force: true });
      await cluster.start(victim);
      await cluster.ready();

      const load = new OneShotLoad(topic, ["a", "b", "c"]);
      load.start({ keyed: 2, unkeyed: 2, pauseMs: 2, padBytes: 8 * 1024 });
      // Until the disk is full and well past it: df says so, or the node's JetStream, having
      // met ENOSPC, disabled itself with room still free (a block it could not write whole).
      type Jsz = { config?: { store_dir?: string }; disabled?: boolean };
      const full = async () => {
        const out = spawnSync("df", ["-B1", "--output=avail", node.dataDir], { encoding: "utf8" }).stdout.trim().split("\n").at(-1)!;
        if (Number(out) < 64 * 1024) return true;
        return (await monitor<Jsz>(node.server!, "/jsz").catch(() => undefined))?.disabled === true;
      };
      const fullAt = await until("the follower's disk is full", async () => (await full()) && Date.now(), 60_000, 100);
      const ackedAtFull = load.acked;
      await sleep(3_000);
      const ackedWhileFull = load.acked - ackedAtFull;
      const jszFull = await monitor<Jsz>(node.server!, "/jsz").catch(() => undefined);

      // Grow the disk, restart the node, make it lead, read through it.
      expect(mount("-o", `remount,size=${size + 64}m`, node.dataDir)).toBe(true);
      await cluster.stop(victim);
      await cluster.start(victim);
      await cluster.ready();
      await until(
        "the node's replica is current again",
        async () => {
          const info = await jsm.streams.info(stream);
          return info.cluster?.leader === node.name || !!info.cluster?.replicas?.some((r) => r.name === node.name && r.current);
        },
        60_000,
        250,
      );
      const recoveredMs = Date.now() - fullAt;
      const leads = await makeLeader(cluster, admin, stream, victim, node.name);
      const ackedAtLead = load.acked;
      await until("publishes are acknowledged with the node leading", () => load.acked >= ackedAtLead + 50, 30_000, 20);
      await load.stopPublishing();
      const { stored, readErrors } = await load.readBack();
      await load.settle(stored);
      const replays = await load.replays(stored);
      const f = { tmpfsMiB: size, ackedWhileFull, jetstreamDisabledWhileFull: jszFull?.disabled ?? "unknown", recoveredMs, nodeLeads: leads, replays, ...load.account(stored), readErrors };
      console.log("FIGURES disk-full " + JSON.stringify(f));
      expect(f).toMatchObject({ ackedLost: 0, storedTwice: 0, untypedErrors: 0, holes: 0, duplicates: 0, outOfOrder: 0, falseGaps: 0 });
      expect(f.inDoubtSaidSo).toBe(f.inDoubt);
      expect(f.readersExact).toBe(f.readers);
      expect(ackedWhileFull).toBeGreaterThan(0);
      expect(replays.every((r) => typeof r === "number")).toBe(true);
    } finally {
      await admin.close();
      await sync.close();
      // The tmpfs goes before the cluster removes its directory (a mount point cannot be removed).
      if (mounted) {
        for (let i = 0; i < cluster.nodes.length; i++) if (cluster.nodes[i]!.dataDir === mounted) await cluster.stop(i);
        spawnSync("umount", ["-l", mounted]);
      }
    }
  }, 180_000);
});
