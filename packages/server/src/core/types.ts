/**
 * The topic core's public types. The bridge and the workers depend on these interfaces, not on
 * NATS, so a second backend or a test fake can stand behind them.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";

/** Retention limits of a stream. Either limit reached removes the oldest events. */
export interface RetentionOptions {
  /** Longest time an event is kept, in ms. @default 7 days */
  maxAgeMs?: number;
  /** Largest size of the stream, in bytes. Reserved on the broker (x replicas) at creation. @default 64 MiB */
  maxBytes?: number;
}

/** A topic declaration, as passed to `sync.topic()`. */
export interface TopicOptions {
  /** `[a-z0-9][a-z0-9._-]*`, at most 128 characters. */
  id: string;
  /** Owning application; part of the declaration, checked for drift. @default "" (none) */
  owner?: string;
  retention?: RetentionOptions;
  /** Byte limit of the dead-letter stream. @default the retention's maxBytes */
  deadLetterRetention?: { maxBytes?: number };
  /** Window in which an idempotency key deduplicates, capped at `retention.maxAgeMs`. @default 120000 */
  dedupeWindowMs?: number;
  /** Largest JSON envelope of one event, in bytes. @default 131072 */
  maxPayloadBytes?: number;
  /** Stream replicas (R3 in a 3-node cluster). @default 1 */
  replicas?: number;
}

/** What `publish()` returns. */
export interface PublishReceipt {
  eventId: string;
  cursor: Cursor;
  streamSequence: number;
  /** True when the idempotency key was seen inside the dedupe window; nothing new was stored. */
  duplicate: boolean;
}

export interface PublishOptions<T> {
  data: T;
  tenantId?: string;
  idempotencyKey?: string;
}

export interface ReplayOptions {
  /** Start after this cursor. Absent: from the first retained event. */
  after?: string;
  /** Stop at this cursor (inclusive). Absent: the head when the replay starts. */
  until?: string;
  tenantId?: string;
  signal?: AbortSignal;
}

export interface FollowOptions {
  after?: string;
  tenantId?: string;
  signal?: AbortSignal;
}

export interface LiveOptions {
  tenantId?: string;
  signal?: AbortSignal;
}

export interface HubSubscribeOptions {
  /** Replay after this cursor, then follow. Absent: live-only from the head read at subscribe. */
  after?: string;
  signal?: AbortSignal;
}

/** The process's shared follower of one (topic, tenant). */
export interface Hub<T = unknown> {
  readonly topicId: string;
  readonly tenantId: string | undefined;
  subscribe(options?: HubSubscribeOptions): AsyncIterable<TidemarkEvent<T>>;
  /** Subscribers currently attached. */
  readonly subscriberCount: number;
}

/** Where a durable consumer starts when it is first created. */
export type ProcessStart = "earliest" | "latest" | { after: string };

export interface ProcessOptions {
  /** Durable consumer name: `[A-Za-z0-9_-]+`. The same name shares deliveries. */
  consumer: string;
  start: ProcessStart;
  delivery: {
    /** Attempts before the event is dead-lettered, at least 1. */
    maxAttempts: number;
    /** Delay before attempt n+1 is `backoffMs[n-1]`; the last value repeats. */
    backoffMs: number[];
    /**
     * Ack wait of the consumer: an event whose worker died is redelivered after this long. A
     * running handler renews it (in-progress acks every third of it), so it does not bound
     * handler time. Unset, a worker adopts an existing consumer's ack wait.
     * @default 3000
     */
    leaseMs?: number;
  };
  /** Handlers in flight at once. @default 1 */
  concurrency?: number;
  tenantId?: string;
  /**
   * Deadline of a `worker.stop()` called without one: when handlers still run after this long,
   * `stop()` rejects with WorkerStopTimeoutError. Unset: `stop()` waits as long as they run.
   */
  stopGraceMs?: number;
}

/** An event as a `process()` handler sees it. */
export interface ProcessEvent<T = unknown> extends TidemarkEvent<T> {
  /** 1-based delivery attempt. */
  attempt: number;
}

export interface Worker {
  readonly consumer: string;
  /**
   * Stops fetching and resolves once no handler runs. With `timeoutMs` (or the worker's
   * `stopGraceMs`) it rejects with WorkerStopTimeoutError, listing the handlers still running,
   * when they outlast it; it never resolves while one runs.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/** A dead letter: the original event and why it failed. */
export interface DeadLetter<T = unknown> {
  event: TidemarkEvent<T>;
  consumer: string;
  attempts: number;
  error: { name: string; message: string };
  /** When it was dead-lettered, ms since the epoch. */
  deadLetteredAt: number;
  /** Sequence in the dead-letter stream. */
  sequence: number;
}

export interface DeadLetters<T = unknown> {
  replay(options?: { signal?: AbortSignal }): AsyncIterable<DeadLetter<T>>;
  /** Hands every dead letter back to the consumer; returns how many were redriven. */
  redrive(): Promise<number>;
}

/**
 * A saved position of one reader (`topic.checkpoint(name, { tenantId })`), kept on the broker.
 * It never moves backwards, whichever process saves.
 */
export interface Checkpoint {
  readonly name: string;
  readonly tenantId: string | undefined;
  /**
   * The saved cursor, or undefined. CursorMismatchError when the topic was re-created since;
   * InvalidCursorError when the saved cursor is past the head (repair it with `reconcile()`).
   */
  load(): Promise<Cursor | undefined>;
  /**
   * Saves "applied up to `cursor`" unless a later cursor is saved already; returns the saved
   * cursor. With a tenant, saves the topic's head instead when the tenant has no event after it.
   * A cursor past the head is an InvalidCursorError (nothing saved); a saved cursor past the
   * head is replaced.
   */
  save(cursor: string): Promise<Cursor>;
  /**
   * Moves an idle tenant's saved cursor to the head (the save rule), and a saved cursor past
   * the head back to it; returns the saved cursor.
   */
  reconcile(): Promise<Cursor | undefined>;
}

/** Where a first page of history starts: a tenant's last N events, or those since a time. */
export type FirstPage = { last: number } | { since: number | Date };

/**
 * A principal's read state of one (topic, tenant) (`topic.readState({ principal, tenantId })`):
 * every event up to `cursor` is read, and so are the events in `items` above it.
 */
export interface ReadState {
  /** Everything up to this cursor is read; undefined: nothing marked read. */
  cursor: Cursor | undefined;
  /** Event ids read one by one above `cursor` (at most 100; folded in when the cursor passes them). */
  items: string[];
  /** Grows with every stored change; 0 when nothing is stored. */
  version: number;
}

/** A listener's handle on a read state's changes (`readState.watch()`). */
export interface ReadStateWatch {
  /** Stops the listener. */
  close(): void;
}

/**
 * One principal's read state of one (topic, tenant), kept in a KV bucket per namespace
 * (`TMRS_<namespace>`). Every write is a compare-and-set: the cursor never moves back.
 */
export interface ReadStateHandle {
  readonly tenantId: string | undefined;
  /** The stored state (cursor undefined, no items, version 0 when none). */
  get(): Promise<ReadState>;
  /**
   * Marks every event up to `upTo` read, unless a later cursor is stored; returns the stored
   * state. Pass the newest event the user was shown, not the head. A cursor past the head is an
   * InvalidCursorError; one of another topic or incarnation a CursorMismatchError.
   */
  markRead(upTo: string): Promise<ReadState>;
  /**
   * Marks one event (by its cursor) read above the cursor. InvalidArgumentError when the event
   * is not this tenant's; LimitExceededError when 100 items are read above the cursor already.
   */
  markItemRead(cursor: string): Promise<ReadState>;
  /** Calls `listener` with the new state on every change, by any process; resolves once subscribed. */
  watch(listener: (state: ReadState) => void): Promise<ReadStateWatch>;
}

export interface WatchOptions {
  tenantId?: string;
  signal?: AbortSignal;
}

/** A coalesced change signal: each tick means "something changed since the last tick was read". */
export interface Watch extends AsyncIterable<void> {
  /** Ends the watch (as aborting its signal does). */
  close(): void;
}

/**
 * What a topic of the core alone can do: publish and read. A Sync made by `createCoreSync()`
 * (a deep import of `core/sync.ts`, without the hub and worker modules) hands out these.
 */
export interface CoreTopic<T = unknown> {
  readonly id: string;
  readonly options: Readonly<ResolvedTopicOptions>;
  publish(options: PublishOptions<T>): Promise<PublishReceipt>;
  replay(options?: ReplayOptions): AsyncIterable<TidemarkEvent<T>>;
  follow(options?: FollowOptions): AsyncIterable<TidemarkEvent<T>>;
  head(): Promise<Cursor>;
  latestCursor(options?: { tenantId?: string }): Promise<Cursor | undefined>;
  cursorSequence(cursor: string): number;
  cursorAt(sequence: number): Cursor;
  live(options?: LiveOptions): AsyncIterable<TidemarkEvent<T>>;
  checkpoint(name: string, options?: { tenantId?: string }): Checkpoint;
  /**
   * The cursor a first page of history starts after: the tenant's last `last` retained events,
   * or its events since `since`, at most 500 (the newest; more is an InvalidArgumentError).
   * The head when there is none. Pass it as `after` to `replay`, `follow` or `hub().subscribe`.
   */
  cursorBefore(options: { tenantId?: string; signal?: AbortSignal } & FirstPage): Promise<Cursor>;
  /**
   * The read state of `principal` (the principal key the bridge uses: `principalKey(principal)`,
   * by default the principal's `id` or `sub`) for the tenant.
   */
  readState(options: { principal: string; tenantId?: string }): ReadStateHandle;
  /** Resolves once subscribed on the server: an event stored after that is never missed. */
  watch(options?: WatchOptions): Promise<Watch>;
  destroy(): Promise<void>;
}

/** A declared topic. Every method that touches the broker provisions it on first use. */
export interface Topic<T = unknown> extends CoreTopic<T> {
  hub(options?: { tenantId?: string }): Hub<T>;
  process(options: ProcessOptions, handler: (event: ProcessEvent<T>) => Promise<void> | void): Promise<Worker>;
  deadLetters(options: { consumer: string }): DeadLetters<T>;
}

/** Fully resolved declaration, defaults applied. */
export interface ResolvedTopicOptions {
  id: string;
  owner: string;
  retention: { maxAgeMs: number; maxBytes: number };
  deadLetterRetention: { maxBytes: number };
  dedupeWindowMs: number;
  maxPayloadBytes: number;
  replicas: number;
}

/** One row of `sync.listTopics()`. */
export interface TopicInfo {
  id: string;
  owner: string;
  events: number;
  bytes: number;
  firstSequence: number;
  lastSequence: number;
  deadLetters: number;
  retention: { maxAgeMs: number; maxBytes: number };
  replicas: number;
}

/** What `sync.stats()` reports. */
export interface SyncStats {
  /**
   * JetStream consumers this Sync's reads hold open now: one ordered consumer per running
   * `replay()`, `follow()` and hub follower (durable `process()` consumers are not counted).
   * Exported by the bridge as `tidemark_jetstream_consumers`.
   */
  consumers: number;
}

/** The nats-server a Sync is connected to (`sync.server()`). */
export interface NatsServerInfo {
  /** The version the server reports, e.g. "2.15.1". */
  version: string;
  /** What Tidemark uses of it (see docs/deployment.md, "Server versions"). */
  features: { metadata: boolean; syncAlways: boolean; multiFilter: boolean; batchDirectGet: boolean };
  /** Set when the Sync runs the embedded server. */
  embedded?: { binary: string; durability: "fsync" | "buffered"; dataDir: string; credentialsFile?: string };
}

/** One process's handle on the broker, as the core alone makes it (see {@link CoreTopic}). */
export interface CoreSync {
  readonly namespace: string;
  topic<T = unknown>(options: TopicOptions): CoreTopic<T>;
  listTopics(options?: { idPrefix?: string }): Promise<TopicInfo[]>;
  /** Resolves once connected (embedded server started if needed). */
  ready(): Promise<void>;
  /** The connected server's version and features, and the embedded server's binary and durability. Connects if needed. */
  server(): Promise<NatsServerInfo>;
  /** True while the NATS connection is up. */
  readonly connected: boolean;
  /** Counters of what this Sync holds on the broker; synchronous, no broker request. */
  stats(): SyncStats;
  /**
   * Stops this Sync's workers (each with `timeoutMs`, default 10 s), then closes the
   * connection. When a handler outlasts the deadline the connection is closed anyway and
   * `close()` rejects with WorkerStopTimeoutError listing it.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/** One process's handle on the broker: its topics have hubs and workers too. */
export interface Sync extends CoreSync {
  topic<T = unknown>(options: TopicOptions): Topic<T>;
}
