/** Shared setup of the process() suites: one nats-server per file, a fresh namespace per Sync. */
import type { JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Sync, Topic, TopicOptions } from "../../src/index.js";
import { runtimeOf, durableName } from "../../src/internal.js";
import { uniqueNamespace, type TestNats } from "@tidemark/testing";
import { useCoreFixture } from "../core/fixture.js";

export interface ProcessFixture {
  nats: TestNats;
  /** A raw connection, to look at the broker the way an operator would. */
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** A Sync in a fresh namespace (closed after the file), or in `namespace` when given. */
  sync(namespace?: string): Sync;
  /** A topic `id` (default "jobs") in a fresh Sync. */
  topic<T = unknown>(options?: Partial<TopicOptions>, sync?: Sync): Topic<T>;
}

/** The core suites' fixture (server, raw connection, Syncs closed after the file) plus topics. */
export function useProcessFixture(): ProcessFixture {
  const core = useCoreFixture();
  return {
    get nats() {
      return core.nats;
    },
    get nc() {
      return core.nc;
    },
    get jsm() {
      return core.jsm;
    },
    sync: (namespace = uniqueNamespace()) => core.sync({ namespace }),
    topic: <T>(options: Partial<TopicOptions> = {}, sync = core.sync()) =>
      sync.topic<T>({ id: "jobs", retention: { maxAgeMs: 3600_000, maxBytes: 64 * 1024 ** 2 }, ...options }),
  };
}

/** Consumer info of `consumer` on the topic's event stream, as an operator sees it. */
export async function consumerInfo(fx: ProcessFixture, topic: Topic<unknown>, consumer: string) {
  const rt = runtimeOf(topic);
  return fx.jsm.consumers.info(rt.streamName, durableName(rt.namespace, rt.options.id, consumer));
}

/** Polls `check` until it returns true; fails after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Collects a finite async iterable. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
