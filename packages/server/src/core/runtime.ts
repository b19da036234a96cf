/**
 * @internal The seam between one declared topic and the modules built on it (workers, dead
 * letters, hubs). It hides how the topic reaches the broker; everything here is provisioned on
 * first use.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamManager, JsMsg, StoredMsg, StreamInfo } from "@nats-io/jetstream";
import type { Cursor, CursorParts, TidemarkEvent } from "@tidemark/shared";
import type { ResolvedTopicOptions } from "./types.js";
import type { TopicNames } from "./resources/broker-names.js";
import type { MeterRegistry } from "../observe/meters.js";

/** Live handles of a provisioned topic. */
export interface TopicHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Incarnation of the event stream (changes when the topic is destroyed and re-created). */
  incarnation: string;
  /** The server has batched direct get (2.11+): short replays use it (read/direct-read.ts). */
  batchDirectGet?: boolean;
}

/**
 * @internal The key under which a topic made by a Sync hands out its runtime. A symbol rather
 * than a class check, so a spy or proxy of such a topic forwards it and layers above the core
 * (the hub's window look) need not import the topic class.
 */
export const TOPIC_RUNTIME: unique symbol = Symbol("tidemark.topicRuntime");

/**
 * @internal The runtime behind a topic made by a Sync (or a proxy of one); undefined for another
 * Topic implementation.
 */
export function runtimeHandle(topic: object): TopicRuntime | undefined {
  return (topic as { readonly [TOPIC_RUNTIME]?: TopicRuntime })[TOPIC_RUNTIME];
}

/** @internal */
export interface TopicRuntime {
  readonly namespace: string;
  readonly options: ResolvedTopicOptions;
  /** Every name of this topic on the broker (see resources/broker-names.ts). */
  readonly names: TopicNames;
  /** JetStream stream holding the events. */
  readonly streamName: string;
  /** The Sync's bound on one broker request. */
  readonly requestTimeoutMs: number;
  /** The Sync's meter registry: workers record their attempts and dead letters there. */
  readonly meters: MeterRegistry;
  /** Whether the connection is up now, and a promise that resolves when it next drops. */
  connectionState(): { connected: boolean; lost: Promise<void> };
  /** JetStream stream holding dead letters of every consumer of this topic. */
  readonly deadLetterStreamName: string;
  /** Subject an event of `tenantId` is published on. */
  subjectFor(tenantId: string | undefined): string;
  /** Filter subject of a read: one tenant, or the whole topic when `tenantId` is undefined. */
  filterFor(tenantId: string | undefined): string;
  /** Subject of `consumer`'s dead letters inside the dead-letter stream. */
  deadLetterSubject(consumer: string): string;
  /** Connects, provisions both streams, checks the declaration; cached after the first call. */
  ready(): Promise<TopicHandles>;
  /**
   * Provisions again after the stream was destroyed and re-created by another process (its
   * incarnation changed): later cursors and events name the new incarnation.
   */
  refresh(): Promise<TopicHandles>;
  /**
   * Stream info of the event stream (undefined when it does not exist), from a request that
   * started after this call; concurrent callers share requests.
   */
  streamInfo(): Promise<StreamInfo | undefined>;
  /** Decodes a stored or delivered message into an event of this topic. */
  toEvent<T = unknown>(msg: JsMsg | StoredMsg): TidemarkEvent<T>;
  cursorAt(sequence: number): Cursor;
  /** Sequence of a cursor of this topic; throws InvalidCursorError / CursorMismatchError. */
  cursorSequence(cursor: string): number;
  /** The decoded cursor of this topic (sequence and incarnation); throws as cursorSequence. */
  cursorParts(cursor: string): CursorParts;
  /** Counts a JetStream consumer a read opened (+1) or released (-1), for `sync.stats()`. */
  trackConsumer(delta: 1 | -1): void;
  /** Maps any NATS error to a Tidemark error (BrokerUnavailableError, ...). */
  mapError(err: unknown): Error;
}
