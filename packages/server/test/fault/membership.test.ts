/**
 * A node removed from the cluster and a new one added, under load (issue 29, item 4; Jepsen's
 * membership fault): a 3-node cluster, an R3 topic under one-shot publishers and `follow()`
 * readers. The stream's leader is stopped and its store deleted (the machine is gone); a new,
 * empty node joins; the lost peer is removed from the stream (`$JS.API.STREAM.PEER.REMOVE`) so
 * JetStream places the third replica on the new node, which catches up. Then the new node is
 * made the stream's leader and the stream is read back, whole and per tenant. Nothing
 * acknowledged may be lost, nothing stored twice, every reader exact.
 */
import { describe, it, expect } from "vitest";
import { rmSync } from "node:fs";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startTestCluster, uniqueNamespace, until } from "@tidemark/testing";
import { createSync } from "../../src/index.js";
import { faultTopicOptions } from "./fixture.js";
import { streamLeader } from "./partition-run.js";
import { OneShotLoad, makeLeader } from "./one-shot-load.js";
import type { FaultEvent } from "./partition-workload.js";

describe("fault: a node removed, a new one added", () => {
  it("membership - the stream leader's node removed for good and a new node added under load: its replica moves to the new node; nothing acknowledged lost or doubled, readers exact", async () => {
    await using cluster = await startTestCluster();
    const namespace = uniqueNamespace();
    const sync = createSync({ namespace, nats: { servers: cluster.urls }, requestTimeoutMs: 2_000 });
    const admin = await connect({ servers: cluster.urls });
    try {
      const jsm = await jetstreamManager(admin);
      const topic = sync.topic<FaultEvent>(faultTopicOptions(3));
      await topic.publish({ data: { n: -1, p: "warmup" }, tenantId: "warmup" });
      const stream = `TMEV_${namespace}_fault~events`;
      const load = new OneShotLoad(topic, ["a", "b", "c"]);
      load.start({ keyed: 2, unkeyed: 2, pauseMs: 5 });
      await until("events are acknowledged", () => load.acked >= 300, 30_000, 20);

      const victim = await streamLeader(cluster, stream);
      const gone = cluster.nodes[victim]!;
      const removedAt = Date.now();
      await cluster.stop(victim);
      rmSync(gone.dataDir, { recursive: true, force: true });
      const added = await cluster.add();
      const fresh = cluster.nodes[added]!;
      await cluster.ready();
      const ackedBefore = load.acked;
      // The lost peer leaves the stream's group; the meta leader places a replica on the new node.
      await until(
        "the lost peer is removed from the stream",
        async () => {
          const answer = (await admin.request(`$JS.API.STREAM.PEER.REMOVE.${stream}`, JSON.stringify({ peer: gone.name }), { timeout: 2_000 })).json<{ success?: boolean }>();
          return answer.success === true;
        },
        30_000,
        500,
      );
      const replicas = async () => {
        const info = await jsm.streams.info(stream);
        return [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => `${r.name}${r.current ? "" : "(behind)"}${r.offline ? "(offline)" : ""}`)];
      };
      await until("the new node holds a current replica", async () => (await replicas()).includes(fresh.name), 60_000, 250);
      const movedMs = Date.now() - removedAt;
      await until("publishes go on", () => load.acked > ackedBefore + 100, 30_000, 20);

      // Make the new node lead the stream, then read everything back through it.
      const leads = await makeLeader(cluster, admin, stream, added, fresh.name);
      const ackedAtLead = load.acked;
      await until("publishes are acknowledged with the new node leading", () => load.acked >= ackedAtLead + 100, 30_000, 20);
      await load.stopPublishing();
      const { stored, readErrors } = await load.readBack();
      await load.settle(stored);
      const replays = await load.replays(stored);
      const f = { removed: gone.name, added: fresh.name, movedMs, newNodeLeads: leads, replicasAtEnd: await replicas(), replays, ...load.account(stored), readErrors };
      console.log("FIGURES membership " + JSON.stringify(f));
      expect(f).toMatchObject({ ackedLost: 0, storedTwice: 0, untypedErrors: 0, holes: 0, duplicates: 0, outOfOrder: 0, falseGaps: 0 });
      expect(f.inDoubtSaidSo).toBe(f.inDoubt);
      expect(f.readersExact).toBe(f.readers);
      expect(replays.every((r) => typeof r === "number")).toBe(true);
      expect(leads).toBe(true);
    } finally {
      await admin.close();
      await sync.close();
    }
  }, 180_000);
});
