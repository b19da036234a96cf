/**
 * The crash storm's event source and its bridge config: personal events round-robin over the
 * users' tenants of `notifications`, group broadcasts round-robin over the group tenants of
 * `groups`, each at a steady rate, every acknowledged stream sequence remembered per tenant
 * (what each subscriber must receive). A publish is retried with its idempotency key until
 * acknowledged, so a retry never doubles an event.
 */
import type { Sync, Topic } from "@tidemark/server";
import { STORM_TOPICS } from "./client.js";
import type { Expected } from "./load.js";

const MiB = 1024 ** 2;

/** The storm's two topics (bridge processes and the publisher declare them identically). */
export function stormTopicOptions(id: string, replicas = 1) {
  return { id, replicas, retention: { maxBytes: 256 * MiB }, deadLetterRetention: { maxBytes: MiB } };
}

/**
 * A `tidemark serve --config` module: a token `u<k>|g<j>` is user k of group j, who may read
 * its own tenant of `notifications` and its group's tenant of `groups`. `limits`: a JS object
 * literal for the bridge's limits; `hubs`: one for the Sync's hub settings; `heartbeatMs`: the
 * bridge's (defaults when omitted).
 */
export function stormConfigSource(namespace: string, o: { replicas?: number; limits?: string; hubs?: string; heartbeatMs?: number } = {}): string {
  const topic = (id: string, field: string) =>
    `{ ...${JSON.stringify(stormTopicOptions(id, o.replicas))}, authorize: (p, r) => r.tenantId !== undefined && r.tenantId === p.${field} }`;
  return `export default {
  namespace: ${JSON.stringify(namespace)},
  topics: [${topic(STORM_TOPICS.personal, "id")}, ${topic(STORM_TOPICS.group, "group")}],
  authenticate: (token) => { const [id, group] = token.split("|"); return id && group ? { id, group } : null; },
  logLevel: "warn",
  ${o.limits ? `limits: ${o.limits},` : ""}
  ${o.hubs ? `hubs: ${o.hubs},` : ""}
  ${o.heartbeatMs ? `heartbeatMs: ${o.heartbeatMs},` : ""}
};
`;
}

/** Publishes one event and resolves with its stream sequence. */
export type PublishOne = (kind: "personal" | "group", tenantId: string, n: number) => Promise<number>;

/** The Tidemark side: `publish()` on the storm's topics of `sync`, retried with the same key. */
export function tidemarkPublishOne(sync: Sync, replicas = 1): PublishOne {
  const topics: Record<"personal" | "group", Topic<{ n: number; title: string }>> = {
    personal: sync.topic(stormTopicOptions(STORM_TOPICS.personal, replicas)),
    group: sync.topic(stormTopicOptions(STORM_TOPICS.group, replicas)),
  };
  const prefix = Math.random().toString(36).slice(2, 8);
  return async (kind, tenantId, n) => {
    const end = Date.now() + 60_000;
    for (;;) {
      try {
        const data = { n, title: `Event ${n} for ${tenantId}: something happened that you may want to see` };
        return (await topics[kind].publish({ data, tenantId, idempotencyKey: `${prefix}-${kind}-${n}` })).streamSequence;
      } catch (err) {
        if (Date.now() > end) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
}

export interface StormRates {
  users: number;
  groups: number;
  /** Personal events per second over all users. */
  personalPerSecond: number;
  /** Group events per second over all groups. */
  groupPerSecond: number;
}

export class StormPublisher {
  readonly expected: Expected = { personal: {}, group: {} };
  acked = 0;
  /** Publishes that failed for good (should stay 0). */
  failed = 0;
  readonly #one: PublishOne;
  #n = 0;
  #pending = new Set<Promise<void>>();

  constructor(one: PublishOne) {
    this.#one = one;
  }

  /** Publishes at `rates` until `signal` aborts, then waits for every publish in flight. */
  async run(rates: StormRates, signal: AbortSignal): Promise<void> {
    const tickMs = 50;
    let personal = 0;
    let group = 0;
    let owedP = 0;
    let owedG = 0;
    while (!signal.aborted) {
      owedP += (rates.personalPerSecond * tickMs) / 1000;
      owedG += (rates.groupPerSecond * tickMs) / 1000;
      // A backlog of acknowledgements (a stalled broker) holds new publishes back.
      for (; owedP >= 1 && this.#pending.size < 2_000; owedP--) this.#track("personal", `u${personal++ % rates.users}`);
      for (; owedG >= 1 && this.#pending.size < 2_000; owedG--) this.#track("group", `g${group++ % rates.groups}`);
      await new Promise((r) => setTimeout(r, tickMs));
    }
    await Promise.all(this.#pending);
  }

  #track(kind: "personal" | "group", tenantId: string): void {
    const p = this.#one(kind, tenantId, this.#n++).then(
      (seq) => {
        (this.expected[kind][tenantId] ??= []).push(seq);
        this.acked++;
      },
      () => void this.failed++,
    );
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }
}
