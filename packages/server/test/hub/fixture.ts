/** Helpers of the hub and bridge suites: consumers as the broker reports them, and a topic spy. */
import type { Topic } from "../../src/index.js";
import { monitor, type TestNats } from "@tidemark/testing";

interface Jsz {
  account_details?: { stream_detail?: { name: string; consumer_detail?: { name: string }[] }[] }[];
}

/** JetStream consumers on the streams whose name contains `namespace`, from `/jsz?consumers=true`. */
export async function consumersOf(nats: TestNats, namespace: string): Promise<number> {
  const jsz = await monitor<Jsz>(nats, "/jsz?accounts=true&streams=true&consumers=true");
  let n = 0;
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) {
      if (stream.name.includes(`_${namespace}_`)) n += stream.consumer_detail?.length ?? 0;
    }
  }
  return n;
}

/** Counts calls of the reading methods; everything else goes to the real topic unchanged. */
export function spyTopic<T>(
  topic: Topic<T>,
  overrides: Partial<Topic<T>> = {},
): Topic<T> & { calls: { replay: number; follow: number; head: number } } {
  const calls = { replay: 0, follow: 0, head: 0 };
  const own: Record<string | symbol, unknown> = {
    calls,
    replay: (o: Parameters<Topic<T>["replay"]>[0]) => (calls.replay++, (overrides.replay ?? topic.replay.bind(topic))(o)),
    follow: (o: Parameters<Topic<T>["follow"]>[0]) => (calls.follow++, (overrides.follow ?? topic.follow.bind(topic))(o)),
    head: () => (calls.head++, (overrides.head ?? topic.head.bind(topic))()),
  };
  for (const [key, value] of Object.entries(overrides)) if (!(key in own)) own[key] = value;
  return new Proxy(topic, {
    get(target, prop) {
      if (prop in own) return own[prop];
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Topic<T> & { calls: typeof calls };
}

/** Polls `check` until it returns true (or throws after `timeoutMs`). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** JetStream API requests the server has answered so far (`/jsz` `api.total`). */
export async function jsApiRequests(nats: TestNats): Promise<number> {
  return (await monitor<{ api: { total: number } }>(nats, "/jsz")).api.total;
}

/**
 * Publishes `count` events of another tenant, paced, to push a small topic's retained window
 * forward the way steady traffic does (a poll of the window sees it move between publishes).
 */
export async function pushWindow(topic: Topic<string>, tenantId: string, count: number, pauseMs = 40): Promise<void> {
  for (let i = 0; i < count; i++) {
    await topic.publish({ data: "x".repeat(300), tenantId });
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

/** First retained stream sequence of a topic, as an operator sees it. */
export async function firstRetained(sync: { listTopics(o?: { idPrefix?: string }): Promise<{ id: string; firstSequence: number }[]> }, id: string): Promise<number> {
  return (await sync.listTopics({ idPrefix: id })).find((t) => t.id === id)!.firstSequence;
}
