/**
 * One network fault under the issue #17 workload, with its accounting: one-shot publishers
 * (keyed and not) on a Sync pinned to a chosen node and on the scene's Sync, the scene's
 * WebSocket subscribers through both bridges, and a counting `process()` worker.
 */
import { decodeCursor } from "@tidemark/shared";
import { createSync, type Sync, type Topic } from "../../src/index.js";
import { monitor, until, type TestCluster } from "@tidemark/testing";
import { faultTopicOptions, type ClusterScene } from "./fixture.js";
import { OneShotPublisher, account, longestAckGap, readStored, type FaultEvent } from "./partition-workload.js";

/** TIDEMARK_FAULTS=long (`pnpm test:faults`) runs the long variants. */
export const LONG = process.env.TIDEMARK_FAULTS === "long";

/** The node leading the stream whose name contains `part` (from /jsz). */
export async function streamLeader(cluster: TestCluster, part: string): Promise<number> {
  type Jsz = { account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[] };
  const name = await until(`stream ${part} has a leader`, async () => {
    for (const n of cluster.nodes) {
      if (!n.server) continue;
      const jsz = await monitor<Jsz>(n.server, "/jsz?accounts=true&streams=true");
      for (const a of jsz.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name.includes(part) && s.cluster?.leader) return s.cluster.leader;
    }
    return undefined;
  });
  return cluster.nodes.findIndex((n) => n.name === name);
}

/** A Sync whose client connects to `first` (and fails over to the others in order). */
export function pinnedSync(cluster: TestCluster, namespace: string, first: number): Sync {
  const urls = [cluster.nodes[first]!.url, ...cluster.nodes.filter((_, i) => i !== first).map((n) => n.url)];
  return createSync({ namespace, nats: { servers: urls, noRandomize: true }, requestTimeoutMs: 2_000 });
}

export interface FaultRun {
  cluster: TestCluster;
  scene: ClusterScene;
  runs: Map<string, number>;
  /** The node the pinned publishers' client is on (defaults to the stream leader). */
  pinTo?: (leader: number) => number;
  /** Or the URLs the pinned publishers' client uses (e.g. fault proxies), instead of a node. */
  nearServers?: string[];
  /** Injects the fault, waits it out and heals. */
  fault: (ctx: { leader: number; pinned: number }) => Promise<void>;
}

/** Runs one fault and returns its figures (also logged as `FIGURES partition-<name>`). */
export async function runFault(name: string, o: FaultRun) {
  const { cluster, scene } = o;
  const leader = await streamLeader(cluster, "fault~events");
  const pinned = o.pinTo?.(leader) ?? leader;
  const near = o.nearServers
    ? createSync({ namespace: scene.namespace, nats: { servers: o.nearServers }, requestTimeoutMs: 2_000 })
    : pinnedSync(cluster, scene.namespace, pinned);
  const ac = new AbortController();
  try {
    const nearTopic = near.topic<FaultEvent>(faultTopicOptions(3));
    const topic = scene.sync.topic<FaultEvent>(faultTopicOptions(3)) as Topic<FaultEvent>;
    await nearTopic.head(); // connected and provisioned before the clock starts
    const pubs = [new OneShotPublisher(nearTopic, true), new OneShotPublisher(nearTopic, false), new OneShotPublisher(topic, true), new OneShotPublisher(topic, false)];
    const running = Promise.all(pubs.map((p) => p.run(scene.tenants, ac.signal, { concurrency: 1, pauseMs: 25 })));
    const calls = () => pubs.flatMap((p) => p.calls);
    await until("publishes are acknowledged before the fault", () => calls().filter((c) => c.ok).length >= 20, 20_000);
    const faultAt = Date.now();
    await o.fault({ leader, pinned });
    const healedAt = Date.now();
    // Recovered: the cluster answers, and each publisher (both Syncs) has an ack started after the heal.
    await cluster.ready({ timeoutMs: 60_000 });
    await until("every publisher is acknowledged again", () => pubs.every((p) => p.calls.some((c) => c.ok && c.at >= healedAt)), 60_000);
    const publishBackMs = Math.max(...pubs.map((p) => Math.min(...p.calls.filter((c) => c.ok && c.at >= healedAt).map((c) => c.at + c.ms)))) - healedAt;
    await new Promise((r) => setTimeout(r, 500));
    ac.abort();
    await running;
    const stopAt = Date.now();

    const stored = await readStored(topic);
    // The read must reach the head the leader reports (a replica behind would end it early).
    const headSeq = decodeCursor(await topic.head()).sequence;
    const readSeq = Math.max(0, ...[...stored.sequences.values()].map((q) => q.at(-1) ?? 0));
    const want = (tenant: string) => stored.sequences.get(tenant) ?? [];
    await until("every subscriber has every stored event of its tenant", () => scene.subscribers.every((s) => new Set(s.sequences).size >= want(s.options.tenantId).length), 60_000, 250);
    const ids = calls().filter((c) => stored.copies.has(c.id)).map((c) => c.id);
    await until("the worker ran every stored event", () => ids.every((id) => o.runs.has(id)), 60_000, 250);
    const deliveredAllMs = Date.now() - healedAt;
    const figures = {
      fault: name,
      faultMs: healedAt - faultAt,
      leader,
      pinnedTo: o.nearServers ? "proxies" : pinned,
      readShort: readSeq < headSeq,
      headSeq,
      readSeq,
      ...account({ calls: calls(), stored, runs: o.runs, subscribers: scene.subscribers }),
      publishBackMs,
      deliveredAllMs,
      // Per client: the pinned one (on the chosen node) and the scene's (on any node).
      longestNoAckPinnedMs: longestAckGap(pubs.slice(0, 2).flatMap((p) => p.calls), faultAt, stopAt),
      longestNoAckOtherMs: longestAckGap(pubs.slice(2).flatMap((p) => p.calls), faultAt, stopAt),
      bridgesUp: scene.bridges.every((b) => b.child.exitCode === null && b.child.signalCode === null),
      nodesUp: cluster.nodes.every((n) => n.server),
    };
    console.log(`FIGURES partition-${name} ${JSON.stringify(figures)}`);
    for (const c of calls().filter((x) => !x.ok).slice(0, 3)) console.log(`FAILED partition-${name} ${JSON.stringify(c)}`);
    return figures;
  } finally {
    ac.abort();
    await near.close();
  }
}
