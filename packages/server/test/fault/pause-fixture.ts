/**
 * The workload and accounting of the pause suites (issue 17): publishers that call `publish()`
 * once per event and never retry (with and without idempotency keys), WebSocket subscribers
 * through real bridges that resume from their cursors and give up a silent socket, and a
 * `process()` worker counting handler runs. After a fault, `account()` reads the stream back
 * and says what was lost, stored twice, in doubt, delivered and run.
 */
import { isTidemarkError, type Sync, type Topic } from "../../src/index.js";
import { createSync } from "../../src/index.js";
import { startBridgeProcess, until, writeBridgeConfig, type BridgeProcess, type TestCluster } from "@tidemark/testing";
import { faultConfigSource, faultTopicOptions, startSubscribers } from "./fixture.js";
import { tally } from "./subscriber.js";
import type { ResumingSubscriber } from "./subscriber.js";

export type PauseEvent = { n: number; p: string };

interface Jsz {
  meta_cluster?: { leader?: string };
  account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
}

async function jsz(cluster: TestCluster, index: number, query = ""): Promise<Jsz> {
  const n = cluster.nodes[index]!;
  return (await (await fetch(new URL(`/jsz${query}`, n.server!.monitorUrl), { signal: AbortSignal.timeout(2_000) })).json()) as Jsz;
}

/** The node index leading the event stream of `namespace`'s fault topic, asked of a node that is not `skip`. */
export async function streamLeader(cluster: TestCluster, namespace: string, skip = -1): Promise<number> {
  const name = await until("the fault stream has a leader", async () => {
    for (let i = 0; i < cluster.nodes.length; i++) {
      if (i === skip || !cluster.nodes[i]!.server) continue;
      for (const a of (await jsz(cluster, i, "?accounts=true&streams=true")).account_details ?? []) {
        for (const s of a.stream_detail ?? []) if (s.name === `TMEV_${namespace}_fault~events` && s.cluster?.leader) return s.cluster.leader;
      }
    }
    return undefined;
  });
  return cluster.nodes.findIndex((n) => n.name === name);
}

/** The node index of the JetStream meta leader. */
export async function metaLeader(cluster: TestCluster, skip = -1): Promise<number> {
  const name = await until("the cluster has a meta leader", async () => {
    for (let i = 0; i < cluster.nodes.length; i++) {
      if (i === skip || !cluster.nodes[i]!.server) continue;
      const leader = (await jsz(cluster, i)).meta_cluster?.leader;
      if (leader) return leader;
    }
    return undefined;
  });
  return cluster.nodes.findIndex((n) => n.name === name);
}

export interface Failure {
  n: number;
  at: number;
  code: string | undefined;
  maybeStored: boolean | undefined;
  message: string;
}

/** One `publish()` call per event, no retry: what a careless application does. */
export class OncePublisher {
  readonly label: string;
  readonly keyed: boolean;
  /** event id -> tenant, for acknowledged calls. */
  readonly acked = new Map<string, string>();
  /** event id -> ack time. */
  readonly ackedAt = new Map<string, number>();
  /** event id -> stream sequence of its receipt. */
  readonly ackedSeq = new Map<string, number>();
  readonly failures: Failure[] = [];
  published = 0;
  readonly #topic: Topic<PauseEvent>;

  constructor(topic: Topic<PauseEvent>, label: string, keyed: boolean) {
    this.#topic = topic;
    this.label = label;
    this.keyed = keyed;
  }

  /** Publishes until `signal` aborts, `concurrency` calls at a time, `pauseMs` between calls. */
  async run(tenants: string[], signal: AbortSignal, options: { concurrency?: number; pauseMs?: number } = {}): Promise<void> {
    const worker = async () => {
      while (!signal.aborted) {
        const n = this.published++;
        const tenantId = tenants[n % tenants.length]!;
        try {
          const idempotencyKey = this.keyed ? `${this.label}-${n}` : undefined;
          const receipt = await this.#topic.publish({ data: { n, p: this.label }, tenantId, idempotencyKey });
          this.acked.set(receipt.eventId, tenantId);
          this.ackedAt.set(receipt.eventId, Date.now());
          this.ackedSeq.set(receipt.eventId, receipt.streamSequence);
        } catch (err) {
          this.failures.push({
            n,
            at: Date.now(),
            code: isTidemarkError(err) ? err.code : undefined,
            maybeStored: (err as { maybeStored?: boolean }).maybeStored,
            message: String((err as Error).message).slice(0, 200),
          });
        }
        await new Promise((r) => setTimeout(r, options.pauseMs ?? 20));
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 2 }, worker));
  }
}

/** Counts handler runs per event id of a `process()` worker. */
export class RunCounter {
  readonly runs = new Map<string, number>();
  record(eventId: string): void {
    this.runs.set(eventId, (this.runs.get(eventId) ?? 0) + 1);
  }
}

export interface PauseScene {
  namespace: string;
  config: string;
  /** The Syncs of the publishers and of the worker (each its own connection). */
  syncs: Sync[];
  bridges: BridgeProcess[];
  topic: Topic<PauseEvent>;
  tenants: string[];
  subscribers: ResumingSubscriber[];
  counter: RunCounter;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Bridge heartbeat of the pause suites: clients give a socket up after 2.5 of them. */
export const HEARTBEAT_MS = 2_000;

/** Starts a `tidemark serve` on `nats` (one URL: it learns the others from the cluster). */
export function startPauseBridge(config: string, nats: string): Promise<BridgeProcess> {
  return startBridgeProcess(["--nats", nats, "--config", config]);
}

/**
 * A Sync whose first server is `first` (the others follow in order): the node a test freezes
 * is then the one its connection is on.
 */
export function syncOn(cluster: TestCluster, namespace: string, first: number): Sync {
  const servers = [cluster.nodes[first]!, ...cluster.nodes.filter((_, i) => i !== first)].map((n) => n.url);
  return createSync({ namespace, nats: { servers, noRandomize: true } });
}

/** Creates the R3 fault topic of `namespace` (a warm-up publish), so its leader can be looked up. */
export async function provision(cluster: TestCluster, namespace: string): Promise<void> {
  const sync = syncOn(cluster, namespace, 0);
  try {
    await sync.topic<PauseEvent>(faultTopicOptions(3)).publish({ data: { n: -1, p: "warmup" }, tenantId: "warmup" });
  } finally {
    await sync.close();
  }
}

/**
 * Two bridges (on nodes `bridgeNodes`), subscribers over both, and a `process()` worker whose
 * Sync is on node `workerNode`, on the topic `provision()` created.
 */
export async function startPauseScene(
  cluster: TestCluster,
  dir: string,
  namespace: string,
  o: { tenants: number; subscribers: number; bridgeNodes: [number, number]; workerNode: number },
): Promise<PauseScene> {
  const config = writeBridgeConfig(dir, faultConfigSource(namespace, 3, `heartbeatMs: ${HEARTBEAT_MS},`));
  const syncs: Sync[] = [];
  const bridges: BridgeProcess[] = [];
  const subscribers: ResumingSubscriber[] = [];
  const dispose = async () => {
    for (const s of subscribers) s.close();
    await Promise.all(bridges.map((b) => b.kill()));
    await Promise.all(syncs.map((s) => s.close()));
  };
  try {
    const setup = syncOn(cluster, namespace, o.workerNode);
    syncs.push(setup);
    const topic = setup.topic<PauseEvent>(faultTopicOptions(3));
    bridges.push(...(await Promise.all(o.bridgeNodes.map((i) => startPauseBridge(config, cluster.nodes[i]!.url)))));
    const tenants = Array.from({ length: o.tenants }, (_, i) => `t${i}`);
    const urls = bridges.map((b) => b.wsUrl);
    subscribers.push(...(await startSubscribers(o.subscribers, { urls, topic: "fault.events", tenants, silenceMs: 2.5 * HEARTBEAT_MS })));
    const counter = new RunCounter();
    await topic.process(
      { consumer: "pause-worker", start: "latest", delivery: { maxAttempts: 5, backoffMs: [200], leaseMs: 5_000 } },
      (e) => counter.record(e.eventId),
    );
    return { namespace, config, syncs, bridges, topic, tenants, subscribers, counter, [Symbol.asyncDispose]: dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The longest time without an acknowledgement in [from, to] (the publish outage). */
export function longestNoAck(publishers: OncePublisher[], from: number, to: number): { ms: number; endsAt: number } {
  const times = [from, ...publishers.flatMap((p) => [...p.ackedAt.values()]).filter((t) => t > from && t < to).sort((a, b) => a - b), to];
  let best = { ms: 0, endsAt: from };
  for (let i = 1; i < times.length; i++) if (times[i]! - times[i - 1]! > best.ms) best = { ms: times[i]! - times[i - 1]!, endsAt: times[i]! };
  return best;
}

function countBy(values: (string | number)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** Reads the topic back per tenant and accounts for every call, delivery and handler run. */
export async function account(topic: Topic<PauseEvent>, scene: PauseScene, publishers: OncePublisher[]) {
  const stored = new Map<string, { tenant: string; eventId: string; count: number }>();
  const storedIds = new Map<string, Set<string>>();
  for (const tenant of scene.tenants) {
    const ids = new Set<string>();
    for await (const e of topic.replay({ tenantId: tenant })) {
      ids.add(e.eventId);
      const key = `${e.data.p}/${e.data.n}`;
      const entry = stored.get(key);
      if (entry) entry.count++;
      else stored.set(key, { tenant, eventId: e.eventId, count: 1 });
    }
    storedIds.set(tenant, ids);
  }
  let acked = 0;
  let lost = 0;
  let inDoubt = 0;
  let inDoubtSaidSo = 0;
  let failedNotStored = 0;
  const codes: Record<string, number> = {};
  for (const p of publishers) {
    acked += p.acked.size;
    for (const [id, tenant] of p.acked) if (!storedIds.get(tenant)?.has(id)) lost++;
    for (const f of p.failures) {
      codes[f.code ?? "none"] = (codes[f.code ?? "none"] ?? 0) + 1;
      if (stored.has(`${p.label}/${f.n}`)) {
        inDoubt++;
        if (f.maybeStored === true) inDoubtSaidSo++;
      } else failedNotStored++;
    }
  }
  const storedTwice = [...stored.values()].filter((s) => s.count > 1).length;
  // The subscribers' own "lost": stored events of their tenant not delivered (yet).
  const { lost: undelivered, ...subscribers } = tally(scene.subscribers, (s) => storedIds.get(s.options.tenantId) ?? new Set());
  const allStored = [...stored.values()];
  const handled = allStored.filter((s) => scene.counter.runs.has(s.eventId)).length;
  const runsOverOne = [...scene.counter.runs.values()].reduce((n, c) => n + c - 1, 0);
  return {
    published: publishers.reduce((n, p) => n + p.published, 0),
    acked,
    stored: allStored.length,
    lost,
    storedTwice,
    failed: publishers.reduce((n, p) => n + p.failures.length, 0),
    failureCodes: codes,
    failureMessages: [...new Set(publishers.flatMap((p) => p.failures.map((f) => `${f.code}/${f.maybeStored}: ${f.message}`)))].slice(0, 3),
    inDoubt,
    inDoubtSaidSo,
    failedNotStored,
    undelivered,
    ...subscribers,
    subscriberReconnects: scene.subscribers.reduce((n, s) => n + s.reconnects, 0),
    silentDrops: scene.subscribers.reduce((n, s) => n + s.silentDrops, 0),
    closeCodes: countBy(scene.subscribers.flatMap((s) => s.closeCodes)),
    resubscribes: scene.subscribers.reduce((n, s) => n + s.resubscribes, 0),
    handled,
    handlerRunsOverOne: runsOverOne,
    storedIds,
  };
}

/** Waits until every subscriber has every stored event of its tenant and the worker ran each. */
export async function settle(topic: Topic<PauseEvent>, scene: PauseScene, publishers: OncePublisher[], timeoutMs: number) {
  try {
    return await settleOnce(topic, scene, publishers, timeoutMs);
  } catch (err) {
    const { storedIds, ...a } = await account(topic, scene, publishers);
    const behind = scene.subscribers.filter((s) => [...(storedIds.get(s.options.tenantId) ?? [])].some((id) => !s.seen.has(id)));
    const missing = publishers.flatMap((p) => [...p.acked].filter(([id, t]) => !storedIds.get(t)?.has(id)).map(([id, t]) => ({ id, t, seq: p.ackedSeq.get(id) })));
    console.log("UNSETTLED " + JSON.stringify({ ...a, missing: missing.slice(0, 5), behind: behind.map((s) => ({ token: s.options.token, bridge: s.bridge, delivered: s.delivered, resets: s.resets, troubles: s.troubles.slice(-2), lastSeq: s.sequences.at(-1) })) }));
    throw err;
  }
}

async function settleOnce(topic: Topic<PauseEvent>, scene: PauseScene, publishers: OncePublisher[], timeoutMs: number) {
  return until(
    "every subscriber and the worker have every stored event",
    async () => {
      const a = await account(topic, scene, publishers);
      return a.lost === 0 && a.unexpected === 0 && a.handled === a.stored && scene.subscribers.every((s) => [...(a.storedIds.get(s.options.tenantId) ?? [])].every((id) => s.seen.has(id))) && a;
    },
    timeoutMs,
    500,
  );
}

/** The longest an acknowledged event took to reach a subscriber (ms), over events acked in [from, to], and where. */
export function worstDeliveryLag(scene: PauseScene, publishers: OncePublisher[], from: number, to: number) {
  let worst = { ms: 0, token: "", bridge: -1, ackedAfterMs: 0 };
  for (const p of publishers) {
    for (const [id, tenant] of p.acked) {
      const at = p.ackedAt.get(id)!;
      if (at < from || at > to) continue;
      for (const s of scene.subscribers) {
        if (s.options.tenantId !== tenant) continue;
        const seen = s.firstSeenAt.get(id);
        if (seen !== undefined && seen - at > worst.ms) worst = { ms: seen - at, token: s.options.token, bridge: s.bridge, ackedAfterMs: at - from };
      }
    }
  }
  return worst;
}
