/**
 * Shared pieces of the fault suites: the bridge config module, a publisher that retries with
 * the same idempotency key until acknowledged (so a retry can never double an event), and
 * the counting of what each subscriber should have received.
 */
import { createSync, type Sync, type Topic } from "../../src/index.js";
import { startBridgeProcess, writeBridgeConfig, type BridgeProcess, type TestCluster } from "@tidemark/testing";
import { uniqueNamespace } from "@tidemark/testing";
import { ResumingSubscriber } from "./subscriber.js";

const MiB = 1024 ** 2;

/** The topic of the fault suites (bridge processes and the test declare it identically). */
export function faultTopicOptions(replicas: number) {
  return { id: "fault.events", replicas, retention: { maxBytes: 16 * MiB }, deadLetterRetention: { maxBytes: MiB } };
}

/**
 * A `tidemark serve --config` module: tokens `<principal>@<tenant>` authenticate as a principal
 * of that one tenant; a principal sees its own tenant only.
 */
export function faultConfigSource(namespace: string, replicas: number, extra = ""): string {
  return `export default {
  namespace: ${JSON.stringify(namespace)},
  topics: [{ ...${JSON.stringify(faultTopicOptions(replicas))}, authorize: (p, r) => r.tenantId !== undefined && r.tenantId === p.tenant }],
  authenticate: (token) => { const at = token.indexOf("@"); return at > 0 ? { id: token, tenant: token.slice(at + 1) } : null; },
  logLevel: "warn",
  ${extra}
};
`;
}

/** Publishes with retries; remembers every acknowledged event id per tenant. */
export class Publisher {
  readonly acked = new Map<string, Set<string>>();
  published = 0;
  retries = 0;
  /** Time of each acknowledgement (ms since the epoch), for recovery times. */
  readonly ackTimes: number[] = [];
  readonly #topic: Topic<{ n: number; pad?: string }>;
  readonly #pad: string | undefined;
  /** Idempotency keys are unique per publisher, so two publishers never dedupe each other. */
  readonly #prefix = Math.random().toString(36).slice(2, 8);
  #n = 0;

  /** `padBytes` adds a padding string to each event (to fill slow readers' buffers). */
  constructor(topic: Topic<{ n: number; pad?: string }>, options: { padBytes?: number } = {}) {
    this.#topic = topic;
    this.#pad = options.padBytes ? "x".repeat(options.padBytes) : undefined;
  }

  get ackedCount(): number {
    let n = 0;
    for (const s of this.acked.values()) n += s.size;
    return n;
  }

  /** Publishes one event, retrying the same idempotency key until acknowledged (or `deadlineMs`). */
  async publish(tenantId: string, deadlineMs = 60_000): Promise<void> {
    const n = this.#n++;
    const end = Date.now() + deadlineMs;
    this.published++;
    for (;;) {
      try {
        const receipt = await this.#topic.publish({ data: { n, pad: this.#pad }, tenantId, idempotencyKey: `${this.#prefix}-${n}` });
        let set = this.acked.get(tenantId);
        if (!set) this.acked.set(tenantId, (set = new Set()));
        set.add(receipt.eventId);
        this.ackTimes.push(Date.now());
        return;
      } catch (err) {
        if (Date.now() > end) throw err;
        this.retries++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Publishes `count` events round-robin over `tenants`, `concurrency` at a time. */
  async run(tenants: string[], count: number, options: { concurrency?: number; pauseMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < count && !options.signal?.aborted) {
        const i = next++;
        await this.publish(tenants[i % tenants.length]!);
        if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  }

  /** What a subscriber of `tenantId` must receive. */
  expected(tenantId: string): Set<string> {
    return this.acked.get(tenantId) ?? new Set();
  }
}

/** Starts `n` subscribers, `batch` at a time, spread over the bridges and tenants. */
export async function startSubscribers(
  n: number,
  init: { urls: string[]; topic: string; tenants: string[]; batch?: number; silenceMs?: number },
): Promise<ResumingSubscriber[]> {
  const subs: ResumingSubscriber[] = [];
  const batch = init.batch ?? 100;
  for (let i = 0; i < n; i += batch) {
    const group = Array.from({ length: Math.min(batch, n - i) }, (_, j) => {
      const k = i + j;
      const tenantId = init.tenants[k % init.tenants.length]!;
      return new ResumingSubscriber({ urls: init.urls, token: `s${k}@${tenantId}`, topic: init.topic, tenantId, first: k % init.urls.length, silenceMs: init.silenceMs });
    });
    subs.push(...group);
    await Promise.all(group.map((s) => s.start()));
  }
  return subs;
}

/** What the cluster fault suites run: bridges, the topic, a publisher and subscribers. */
export interface ClusterScene {
  namespace: string;
  sync: Sync;
  bridges: BridgeProcess[];
  topic: Topic<{ n: number }>;
  publisher: Publisher;
  tenants: string[];
  subscribers: ResumingSubscriber[];
  /** Time it took to connect and subscribe every subscriber. */
  subscribeMs: number;
  /** Closes the subscribers, kills the bridges, closes the Sync. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Two `tidemark serve --nats` processes on `cluster`, the R3 fault topic (provisioned by a
 * warm-up publish to a tenant no subscriber has), a retrying publisher, and `subscribers`
 * WebSocket subscribers spread over the bridges and `tenants` tenants `t0…`.
 */
export async function startClusterScene(
  cluster: TestCluster,
  dir: string,
  o: { tenants: number; subscribers: number; bridgeNats?: string[] },
): Promise<ClusterScene> {
  const namespace = uniqueNamespace();
  const config = writeBridgeConfig(dir, faultConfigSource(namespace, 3));
  const bridges: BridgeProcess[] = [];
  const subscribers: ResumingSubscriber[] = [];
  const sync = createSync({ namespace, nats: { servers: cluster.urls }, requestTimeoutMs: 2_000 });
  const dispose = async () => {
    for (const s of subscribers) s.close();
    await Promise.all(bridges.map((b) => b.kill()));
    await sync.close();
  };
  try {
    // `bridgeNats[i]`: bridge i's --nats URLs (e.g. through a fault proxy); the cluster's by default.
    bridges.push(...(await Promise.all([0, 1].map((i) => startBridgeProcess(["--nats", o.bridgeNats?.[i] ?? cluster.urls, "--config", config])))));
    const topic = sync.topic<{ n: number }>(faultTopicOptions(3));
    const publisher = new Publisher(topic);
    const tenants = Array.from({ length: o.tenants }, (_, i) => `t${i}`);
    await publisher.publish("warmup"); // provisions the R3 stream (no subscriber has this tenant)
    const started = Date.now();
    subscribers.push(...(await startSubscribers(o.subscribers, { urls: bridges.map((b) => b.wsUrl), topic: "fault.events", tenants })));
    const subscribeMs = Date.now() - started;
    return { namespace, sync, bridges, topic, publisher, tenants, subscribers, subscribeMs, [Symbol.asyncDispose]: dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
