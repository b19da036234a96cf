/**
 * Shared pieces of the fault suites: the bridge config module, a publisher that retries with
 * the same idempotency key until acknowledged (so a retry can never double an event), and
 * the counting of what each subscriber should have received.
 */
import type { Topic } from "../../src/index.js";
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
  topics: [{ ...${JSON.stringify(faultTopicOptions(replicas))}, authorize: (p, r) => r.tenantId === p.tenant }],
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
  init: { urls: string[]; topic: string; tenants: string[]; batch?: number },
): Promise<ResumingSubscriber[]> {
  const subs: ResumingSubscriber[] = [];
  const batch = init.batch ?? 100;
  for (let i = 0; i < n; i += batch) {
    const group = Array.from({ length: Math.min(batch, n - i) }, (_, j) => {
      const k = i + j;
      const tenantId = init.tenants[k % init.tenants.length]!;
      return new ResumingSubscriber({ urls: init.urls, token: `s${k}@${tenantId}`, topic: init.topic, tenantId, first: k % init.urls.length });
    });
    subs.push(...group);
    await Promise.all(group.map((s) => s.start()));
  }
  return subs;
}
