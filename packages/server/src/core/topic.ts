/**
 * The JetStream implementation of a declared topic. It is also the topic's internal runtime
 * (`TopicRuntime`) for workers and hubs. Every broker-touching method provisions on first use.
 */
import {
  assertTenantId,
  CursorMismatchError,
  cursorPrefix,
  cursorWithPrefix,
  decodeCursor,
  InvalidArgumentError,
  TopicNotFoundError,
  type Cursor,
  type CursorParts,
  type TidemarkEvent,
} from "@tidemark/shared";
import type { JsMsg, PubAck, StoredMsg, StreamInfo } from "@nats-io/jetstream";
import type { Connector } from "./connection/connection.js";
import { isNoMessageFound, isStreamNotFound, mapNatsError } from "./errors.js";
import { HEADROOM_BYTES } from "./options.js";
import { provisionTopic, streamInfo } from "./resources/provision.js";
import { incarnationOf, readEvents } from "./read/reader.js";
import { coalesceAfter } from "./read/coalesce.js";
import { confirmStreamGone, encodePublish, messageId, receiptOf, sendWithRetry, type SendContext, type Sent } from "./publish/publish.js";
import { openLive, type LiveSource } from "./read/live.js";
import { openCheckpoint } from "./read/checkpoint.js";
import { openReadState } from "./read/read-state.js";
import { cursorBefore } from "./read/first-page.js";
import { openWatch } from "./read/watch.js";
import { traceableHeaders } from "./read/trace-probe.js";
import { decodeEvent } from "./read/decode-event.js";
import { publishHeaderPrefix } from "./publish/publish-headers.js";
import { deadLetterSubject, eventFilter, eventSubject, liveSubject, topicNames, type TopicNames } from "./resources/broker-names.js";
import { TOPIC_RUNTIME, type TopicHandles, type TopicRuntime } from "./runtime.js";
import type { MeterRegistry } from "../observe/meters.js";
import type { Checkpoint, FirstPage, ReadStateHandle, DeadLetters, FollowOptions, Hub, LiveOptions, ProcessEvent, ProcessOptions, PublishOptions, PublishReceipt, ReplayOptions, ResolvedTopicOptions, Topic, Watch, WatchOptions, Worker } from "./types.js";

/** What a topic needs from its Sync. */
export interface TopicHost {
  namespace: string;
  connector: Connector;
  /** Where the topic's publishes and workers record metrics. */
  meters: MeterRegistry;
  maxFileStore?: number;
  hub<T>(topic: Topic<T>, tenantId: string | undefined): Hub<T>;
  process<T>(rt: TopicRuntime, options: ProcessOptions, handler: (e: ProcessEvent<T>) => Promise<void> | void): Promise<Worker>;
  deadLetters<T>(rt: TopicRuntime, consumer: string): DeadLetters<T>;
}

export class JetStreamTopic<T = unknown> implements Topic<T>, TopicRuntime {
  readonly id: string;
  readonly options: Readonly<ResolvedTopicOptions>;
  readonly namespace: string;
  readonly #host: TopicHost;
  readonly #names: TopicNames;
  #ready: Promise<TopicHandles> | undefined;
  /** The last provisioned handles, for what must start synchronously (live()). */
  #handles: TopicHandles | undefined;
  /** Handles of the finished current provisioning (a fast path for publish). */
  #current: TopicHandles | undefined;
  #incarnation = "";
  /** Highest sequence this process published in the current incarnation. */
  #highestSeq = 0;
  #prefix: string;

  constructor(host: TopicHost, options: ResolvedTopicOptions) {
    this.#host = host;
    this.options = Object.freeze(options);
    this.id = options.id;
    this.namespace = host.namespace;
    this.#names = topicNames(host.namespace, options.id);
    this.#prefix = cursorPrefix({ namespace: this.namespace, topic: this.id, incarnation: "" });
    this.#sendContext = this.#makeSendContext();
  }

  get meters(): MeterRegistry {
    return this.#host.meters;
  }

  get requestTimeoutMs(): number {
    return this.#host.connector.requestTimeoutMs;
  }
  connectionState(): { connected: boolean; lost: Promise<void> } {
    return { connected: this.#host.connector.connected, lost: this.#host.connector.connectionLost() };
  }

  get streamName(): string {
    return this.#names.stream;
  }
  get deadLetterStreamName(): string {
    return this.#names.deadLetterStream;
  }
  subjectFor(tenantId: string | undefined): string {
    return eventSubject(this.#names, tenantId);
  }
  filterFor(tenantId: string | undefined): string {
    return eventFilter(this.#names, tenantId);
  }
  deadLetterSubject(consumer: string): string {
    return deadLetterSubject(this.#names, consumer);
  }
  get names(): TopicNames {
    return this.#names;
  }

  ready(): Promise<TopicHandles> {
    if (!this.#ready) {
      const p: Promise<TopicHandles> = this.#provision().then(
        (h) => {
          if (this.#ready === p) this.#current = h;
          return h;
        },
        (err: unknown) => {
          if (this.#ready === p) this.#ready = undefined;
          throw err;
        },
      );
      this.#ready = p;
    }
    return this.#ready;
  }

  /** Drops the provisioning: the next use provisions (and checks the broker) again. */
  #forget(): void {
    this.#ready = undefined;
    this.#current = undefined;
  }

  /** @internal The runtime handle (runtime.ts): this topic is its own runtime. */
  get [TOPIC_RUNTIME](): TopicRuntime {
    return this;
  }

  readonly streamInfo = coalesceAfter(async (): Promise<StreamInfo | undefined> => {
    const h = await this.ready();
    try {
      return await streamInfo(h.jsm, this.#names.stream);
    } catch (err) {
      throw this.mapError(err);
    }
  });

  refresh(): Promise<TopicHandles> {
    this.#forget();
    return this.ready();
  }

  async #provision(): Promise<TopicHandles> {
    const conn = await this.#host.connector.connection();
    if (conn.maxPayload < this.options.maxPayloadBytes + HEADROOM_BYTES) {
      throw new InvalidArgumentError(
        `maxPayloadBytes (${this.options.maxPayloadBytes}) plus 4 KiB of headers exceeds the NATS server's max_payload (${conn.maxPayload}); lower it or raise max_payload on the server`,
      );
    }
    const incarnation = await provisionTopic({
      jsm: conn.jsm,
      names: this.#names,
      options: this.options,
      maxFileStore: conn.embedded?.maxFileStore,
      metadata: conn.features.metadata,
    });
    this.#setIncarnation(incarnation);
    this.#handles = { nc: conn.nc, js: conn.js, jsm: conn.jsm, incarnation, batchDirectGet: conn.features.batchDirectGet };
    return this.#handles;
  }

  #setIncarnation(incarnation: string): void {
    if (incarnation === this.#incarnation) return;
    this.#highestSeq = 0;
    this.#incarnation = incarnation;
    this.#prefix = cursorPrefix({ namespace: this.namespace, topic: this.id, incarnation });
  }

  mapError(err: unknown): Error {
    return mapNatsError(err, `topic ${JSON.stringify(this.id)}`);
  }

  trackConsumer(delta: 1 | -1): void {
    this.#host.connector.openConsumers += delta;
  }

  // ---- cursors ----

  cursorAt(sequence: number): Cursor {
    if (!Number.isSafeInteger(sequence) || sequence < 0) {
      throw new InvalidArgumentError(`sequence must be a non-negative integer, got ${String(sequence)}`);
    }
    return cursorWithPrefix(this.#prefix, sequence);
  }

  cursorSequence(cursor: string): number {
    return this.cursorParts(cursor).sequence;
  }

  cursorParts(cursor: string): CursorParts {
    const parts = decodeCursor(cursor);
    if (parts.namespace !== this.namespace || parts.topic !== this.id) {
      throw new CursorMismatchError(
        `cursor belongs to topic ${JSON.stringify(parts.topic)} in namespace ${JSON.stringify(parts.namespace)}, not ${JSON.stringify(this.id)} in ${JSON.stringify(this.namespace)}`,
      );
    }
    return parts;
  }

  toEvent<E = T>(msg: JsMsg | StoredMsg): TidemarkEvent<E> {
    // A delivered message's header block is decoded only when it may hold a trace context.
    return this.decode<E>(msg.seq, msg.data, "headers" in msg ? traceableHeaders(msg) : msg.header);
  }

  /** @internal */
  decode<E = T>(seq: number, data: Uint8Array, headers?: JsMsg["headers"]): TidemarkEvent<E> {
    return decodeEvent<E>(this.#incarnation, this.#prefix, seq, data, headers);
  }

  // ---- writes ----

  publish(options: PublishOptions<T>): Promise<PublishReceipt> {
    // Not an async function: one publish is one attempt's promise and a receipt (refusals reject).
    let sent: Promise<Sent>;
    let key: string | undefined;
    try {
      const { bytes, tenantId, idempotencyKey } = encodePublish(options, this.options.maxPayloadBytes);
      key = idempotencyKey;
      sent = sendWithRetry(this.#sendContext, this.subjectFor(tenantId), bytes, messageId(tenantId, idempotencyKey));
    } catch (err) {
      return Promise.reject(err);
    }
    return sent.then(({ ack, handles }) => {
      // A new event below one already seen: the stream was re-created by another process.
      if (!ack.duplicate && ack.seq <= this.#highestSeq) return this.refresh().then((h) => this.#receipt(ack, h, key));
      return this.#receipt(ack, handles, key);
    });
  }

  #receipt(ack: PubAck, h: TopicHandles, idempotencyKey: string | undefined): PublishReceipt {
    this.#highestSeq = Math.max(this.#highestSeq, ack.seq);
    return receiptOf(ack, h.incarnation, this.#prefix, idempotencyKey);
  }

  readonly #sendContext: SendContext;

  #makeSendContext(): SendContext {
    return {
      topic: this.options.id,
      stream: this.#names.stream,
      headerPrefix: publishHeaderPrefix(this.#names.stream),
      attributes: { topic: this.options.id },
      meters: this.#host.meters,
      requestTimeoutMs: this.#host.connector.requestTimeoutMs,
      deadlineMs: Math.min(this.#host.connector.publishTimeoutMs, this.options.dedupeWindowMs),
      ready: () => this.ready(),
      current: () => this.#current,
      reprovision: () => this.#forget(),
      requests: (nc) => this.#host.connector.publishRequests(nc),
      streamGone: (h, boundMs) => confirmStreamGone(() => streamInfo(h.jsm, this.#names.stream), boundMs),
      mapError: (err) => this.mapError(err),
    };
  }

  async destroy(): Promise<void> {
    const conn = await this.#host.connector.connection();
    for (const name of [this.#names.stream, this.#names.deadLetterStream]) {
      try {
        await conn.jsm.streams.delete(name);
      } catch (err) {
        if (!isStreamNotFound(err)) throw this.mapError(err);
      }
    }
    this.#forget();
  }

  // ---- reads ----

  replay(options: ReplayOptions = {}): AsyncIterable<TidemarkEvent<T>> {
    return readEvents<T>(this, { ...options, follow: false });
  }

  follow(options: FollowOptions = {}): AsyncIterable<TidemarkEvent<T>> {
    return readEvents<T>(this, { ...options, until: undefined, follow: true });
  }

  /** Subscribes now (see read/live.ts); the first iteration reads what arrived since. */
  live(options: LiveOptions = {}): AsyncIterable<TidemarkEvent<T>> {
    let subject: string | Error;
    try {
      if (options.tenantId !== undefined) assertTenantId(options.tenantId);
      subject = liveSubject(this.#names, options.tenantId);
    } catch (err) {
      subject = err as Error;
    }
    const source: LiveSource<T> = {
      subject,
      handlesNow: () => this.#handles,
      ready: () => this.ready(),
      decode: (seq, data, headers) => this.decode<T>(seq, data, headers),
    };
    return openLive(source, options);
  }

  async head(): Promise<Cursor> {
    return this.cursorAt((await this.#currentInfo()).state.last_seq);
  }

  /**
   * Stream info of the current incarnation: when another process destroyed (and maybe
   * re-created) the topic, provision again, once, so cursors name the stream that exists.
   */
  async #currentInfo(): Promise<StreamInfo> {
    for (let attempt = 0; ; attempt++) {
      const h = attempt === 0 ? await this.ready() : await this.refresh();
      const info = await streamInfo(h.jsm, this.#names.stream).catch((e) => Promise.reject(this.mapError(e)));
      if (info && incarnationOf(info) === h.incarnation) return info;
      if (attempt > 0) {
        throw new TopicNotFoundError(`topic ${JSON.stringify(this.id)} changed on the broker while it was read`);
      }
    }
  }

  async latestCursor(options: { tenantId?: string } = {}): Promise<Cursor | undefined> {
    const { tenantId } = options;
    if (tenantId !== undefined) assertTenantId(tenantId);
    // Both paths first make sure this process names the incarnation that exists (another
    // process may have destroyed and re-created the topic).
    const info = await this.#currentInfo();
    if (tenantId === undefined) return info.state.messages > 0 ? this.cursorAt(info.state.last_seq) : undefined;
    const h = await this.ready();
    try {
      const msg = await h.jsm.streams.getMessage(this.#names.stream, { last_by_subj: this.subjectFor(tenantId) });
      return msg ? this.cursorAt(msg.seq) : undefined;
    } catch (err) {
      if (isNoMessageFound(err)) return undefined;
      throw this.mapError(err);
    }
  }

  hub(options: { tenantId?: string } = {}): Hub<T> {
    if (options.tenantId !== undefined) assertTenantId(options.tenantId);
    return this.#host.hub(this, options.tenantId);
  }

  process(options: ProcessOptions, handler: (event: ProcessEvent<T>) => Promise<void> | void): Promise<Worker> {
    return this.#host.process<T>(this, options, handler);
  }

  deadLetters(options: { consumer: string }): DeadLetters<T> {
    return this.#host.deadLetters<T>(this, options.consumer);
  }

  checkpoint = (name: string, options?: { tenantId?: string }): Checkpoint => openCheckpoint(this as JetStreamTopic<unknown>, name, options);

  readState = (options: { principal: string; tenantId?: string }): ReadStateHandle => openReadState(this as JetStreamTopic<unknown>, options);

  cursorBefore(options: { tenantId?: string; signal?: AbortSignal } & FirstPage): Promise<Cursor> {
    return cursorBefore(this, options);
  }

  watch(options: WatchOptions = {}): Promise<Watch> {
    return openWatch(() => this.ready(), (tenantId) => liveSubject(this.#names, tenantId), options);
  }
}

/** @internal The runtime behind a topic made by a Sync (for workers, hubs and tests). */
export function runtimeOf(topic: Topic<unknown>): TopicRuntime {
  if (!(topic instanceof JetStreamTopic)) throw new InvalidArgumentError("not a topic made by createSync()");
  return topic;
}
