/** Shared setup of the core suites: one nats-server per file, a fresh namespace per test. */
import { afterAll, beforeAll } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { createSync, type Sync, type SyncOptions } from "../../src/index.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";

export interface CoreFixture {
  nats: TestNats;
  /** A raw connection, to look at the broker the way an operator would. */
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** A Sync in a fresh namespace (closed after the file), or in `namespace` when given. */
  sync(options?: SyncOptions): Sync;
}

export function useCoreFixture(): CoreFixture {
  const syncs: Sync[] = [];
  const fx = {} as CoreFixture;
  beforeAll(async () => {
    fx.nats = await startTestNats();
    fx.nc = await connect({ servers: fx.nats.url });
    fx.jsm = await jetstreamManager(fx.nc);
  });
  afterAll(async () => {
    await Promise.all(syncs.map((s) => s.close()));
    await fx.nc?.close();
    await fx.nats?.[Symbol.asyncDispose]();
  });
  fx.sync = (options = {}) => {
    const s = createSync({ namespace: uniqueNamespace(), ...options, nats: { servers: fx.nats.url } });
    syncs.push(s);
    return s;
  };
  return fx;
}

/** Collects a finite async iterable. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Awaits the rejection of an iteration (or a promise) and returns the error. */
export async function failure(work: AsyncIterable<unknown> | Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    if (Symbol.asyncIterator in Object(work)) await collect(work as AsyncIterable<unknown>);
    else await work;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error("expected a failure, got success");
}

/** The first `count` messages of `stream` as an ordered push consumer delivers them (the replay's path). */
export async function delivered(nc: NatsConnection, stream: string, count: number): Promise<JsMsg[]> {
  const consumer = await jetstream(nc).consumers.getPushConsumer(stream);
  const messages = await consumer.consume();
  const out: JsMsg[] = [];
  for await (const m of messages) if (out.push(m) === count) break;
  messages.stop();
  return out;
}
