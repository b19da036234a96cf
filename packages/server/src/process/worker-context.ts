/**
 * @internal `WorkerContext`: what one running worker holds (its topic's runtime, connection,
 * consumers, options and handler). A file of its own so that the worker and the verdict helpers
 * it calls (verdicts.ts) share it without importing each other.
 */
import type { Consumer, JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { TopicRuntime } from "../core/runtime.js";
import type { ProcessEvent } from "../core/types.js";
import type { ResolvedProcessOptions } from "./options.js";

/** @internal */
export interface WorkerContext<T> {
  runtime: TopicRuntime;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  options: ResolvedProcessOptions;
  events: Consumer;
  redrive: Consumer;
  /** Incarnation of the event stream, for event ids. */
  incarnation: string;
  /** Dedupe key part that changes when the consumer is re-created (its creation time). */
  consumerEpoch: string;
  /** Ack wait the broker enforces on the worker's consumers (the shorter), which it renews. */
  leaseMs: number;
  handler: (event: ProcessEvent<T>) => Promise<void> | void;
}
