/**
 * Network faults between the nodes of a 3-node cluster (issue #17): every route runs through
 * the fault proxies. Each fault runs under the one-shot workload of partition-run.ts and must
 * lose no acknowledged event, store no call twice, say `maybeStored` on every call that failed
 * but was stored, and give every subscriber exactly the stream's events of its tenant.
 * Short variants here (a few seconds each); `pnpm test:faults` runs the long ones.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startTestCluster, type TestCluster } from "@tidemark/testing";
import { startClusterScene, faultTopicOptions, type ClusterScene } from "./fixture.js";
import { countingWorker, type FaultEvent } from "./partition-workload.js";
import { LONG, runFault } from "./partition-run.js";
import type { Worker } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-partition-"));
const S = (short: number, long: number) => (LONG ? long : short);

let cluster: TestCluster;
let scene: ClusterScene;
let worker: Worker;
let runs: Map<string, number>;

beforeAll(async () => {
  cluster = await startTestCluster({ proxiedRoutes: true });
  scene = await startClusterScene(cluster, dir, { tenants: 6, subscribers: 60 });
  ({ worker, runs } = await countingWorker(scene.sync.topic<FaultEvent>(faultTopicOptions(3)), "partition"));
}, 120_000);

afterAll(async () => {
  await worker?.stop({ timeoutMs: 5_000 }).catch(() => undefined);
  await scene?.[Symbol.asyncDispose]();
  await cluster?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** What the project promises under every network fault. */
function expectAccounted(f: Awaited<ReturnType<typeof runFault>>) {
  expect(f).toMatchObject({ readShort: false, ackedLost: 0, storedTwice: 0, untypedErrors: 0, handlerMissing: 0, holes: 0, duplicates: 0, resets: 0, bridgesUp: true, nodesUp: true });
  expect(f.inDoubtSaidSo).toBe(f.inDoubt);
  expect(f.subscribersExact).toBe(f.subscribers);
  expect(f.acked).toBeGreaterThan(0);
}

const T = S(90_000, 300_000);

describe.sequential("fault: partitions and slow links between the nodes", () => {
  it("partition - the stream leader cut from its peers keeps its clients: nothing acknowledged is lost, nothing stored twice, every in-doubt call says maybeStored", async () => {
    const f = await runFault("isolate-leader", {
      cluster, scene, runs,
      fault: async ({ leader }) => {
        cluster.mesh!.isolate(leader);
        await sleep(S(3_000, 20_000));
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);
  }, T);

  it("partition - split 1 | 2 with a follower alone and clients on it: the majority goes on", async () => {
    const f = await runFault("split-1-2", {
      cluster, scene, runs,
      pinTo: (leader) => (leader + 1) % 3,
      fault: async ({ pinned }) => {
        cluster.mesh!.split([[pinned], [0, 1, 2].filter((i) => i !== pinned)]);
        await sleep(S(3_000, 20_000));
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);

  }, T);

  it("partition - a one-way cut: the stream leader's messages do not reach its peers, theirs reach it", async () => {
    const f = await runFault("one-way", {
      cluster, scene, runs,
      fault: async ({ leader }) => {
        for (let b = 0; b < 3; b++) if (b !== leader) cluster.mesh!.cut(leader, b, { from: leader });
        await sleep(S(3_000, 20_000));
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);
  }, T);

  it("partition - a flapping link: the stream leader's links cut and healed every few seconds", async () => {
    const f = await runFault("flapping", {
      cluster, scene, runs,
      fault: async ({ leader }) => {
        const end = Date.now() + S(4_000, 60_000);
        const step = S(1_000, 3_000);
        while (Date.now() < end) {
          cluster.mesh!.isolate(leader, { forMs: step });
          await sleep(step + 200 + Math.random() * step);
        }
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);
  }, T);

  it("slow link - delay and jitter on every route", async () => {
    const f = await runFault("delay-jitter", {
      cluster, scene, runs,
      fault: async () => {
        cluster.mesh!.each((a, b) => cluster.mesh!.delay(a, b, 150, 150));
        await sleep(S(3_000, 30_000));
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);
  }, T);

  it("slow link - loss on every route that TCP cannot hide: a dropped byte ends the route connection, which reconnects", async () => {
    const f = await runFault("byte-loss", {
      cluster, scene, runs,
      fault: async () => {
        cluster.mesh!.each((a, b) => cluster.mesh!.drop(a, b, 0.0005, { reset: true }));
        await sleep(S(3_000, 30_000));
        cluster.mesh!.heal();
      },
    });
    expectAccounted(f);
  }, T);
});
