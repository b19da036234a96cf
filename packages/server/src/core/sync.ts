/**
 * createSync / configureSync / lazySync: one Sync per process owns the NATS connection. Without
 * configuration the platform decides: on Node (`./node-sync.ts`) the environment,
 * TIDEMARK_NATS_URL (comma-separated) for an existing NATS, otherwise an embedded nats-server
 * under TIDEMARK_DATA_DIR (default `.tidemark`). Runtime-neutral: the entry point registers its
 * platform (transport and defaults) with {@link setSyncPlatform}.
 */
import { assertNamespace, InvalidArgumentError, TidemarkError, WorkerStopTimeoutError } from "@tidemark/shared";
import type { StreamInfo } from "@nats-io/jetstream";
import { Connector, type ExternalNatsOptions } from "./connection.js";
import type { EmbeddedNatsOptions } from "../embedded/server.js";
import { resolveTopicOptions } from "./options.js";
import { JetStreamTopic, type TopicHost } from "./topic.js";
import { eventStreamPrefix, parseDeclaration } from "./streams.js";
import type { Hub, NatsServerInfo, Sync, SyncStats, Topic, TopicInfo, TopicOptions, Worker } from "./types.js";
import type { TopicRuntime } from "./runtime.js";
import { mapNatsError } from "./errors.js";
import type { NatsTransport } from "../transport/types.js";
import type { HubRegistryOptions } from "../hub/registry.js";

export interface SyncOptions {
  /** Prefix of every stream and subject; lets applications share one broker. @default TIDEMARK_NAMESPACE or "app" */
  namespace?: string;
  /** An existing NATS server or cluster. @default TIDEMARK_NATS_URL, else embedded */
  nats?: ExternalNatsOptions;
  /** Options of the embedded nats-server, used when `nats` is absent. */
  embedded?: EmbeddedNatsOptions;
  /** Bound on one broker request (one publish attempt included) while the broker is away. @default 5000 */
  requestTimeoutMs?: number;
  /**
   * Bound on a whole `publish()`: transient failures are retried with the same message id until
   * then, so one call stores at most one event. Capped at the topic's `dedupeWindowMs`. @default 10000
   */
  publishTimeoutMs?: number;
  /** Settings of the Sync's hubs (`topic.hub()`): window sizes, watermark refresh. See `HubRegistryOptions`. */
  hubs?: HubRegistryOptions;
}

const hubOptions = new WeakMap<Sync, HubRegistryOptions>();

/** @internal The `hubs` option a Sync was created with. */
export function hubOptionsOf(sync: Sync): HubRegistryOptions | undefined {
  return hubOptions.get(sync);
}

/** Hooks that other modules (hub, workers) register; kept apart so the core does not import them. */
export interface SyncExtensions {
  hub?: (sync: Sync, topic: Topic<unknown>, tenantId: string | undefined) => Hub<unknown>;
  closeHubs?: (sync: Sync) => void;
  process?: TopicHost["process"];
  deadLetters?: TopicHost["deadLetters"];
}
const extensions: SyncExtensions = {};

/** @internal Registers hub and worker implementations. */
export function extendSync(ext: SyncExtensions): void {
  Object.assign(extensions, ext);
}

/** @internal What an entry point supplies: its NATS transport and its defaults. */
export interface SyncPlatform {
  readonly transport: NatsTransport<EmbeddedNatsOptions>;
  /** Namespace when the options name none (Node: TIDEMARK_NAMESPACE). */
  defaultNamespace(): string | undefined;
  /** Options of the process default Sync when `configureSync()` was not called. */
  defaultOptions(): SyncOptions;
}
let platform: SyncPlatform | undefined;

/** @internal Registers the platform of the entry point (Node or edge); the last one wins. */
export function setSyncPlatform(p: SyncPlatform): void {
  platform = p;
}

function currentPlatform(): SyncPlatform {
  if (!platform) throw new TidemarkError("INTERNAL", 'no NATS transport: import "@tidemark/server" or "@tidemark/server/edge"');
  return platform;
}

class JetStreamSync implements Sync {
  readonly namespace: string;
  readonly #connector: Connector;
  readonly #host: TopicHost;

  constructor(options: SyncOptions, p: SyncPlatform) {
    const namespace = options.namespace ?? p.defaultNamespace() ?? "app";
    assertNamespace(namespace);
    this.namespace = namespace;
    if (options.hubs) hubOptions.set(this, options.hubs);
    this.#connector = new Connector({
      transport: p.transport,
      nats: options.nats,
      embedded: options.embedded,
      requestTimeoutMs: options.requestTimeoutMs,
      publishTimeoutMs: options.publishTimeoutMs,
    });
    const missing = (what: string) => () => {
      throw new TidemarkError("INTERNAL", `${what} is not available: import "@tidemark/server" (not a deep path)`);
    };
    this.#host = {
      namespace,
      connector: this.#connector,
      hub: <T>(topic: Topic<T>, tenantId: string | undefined) =>
        (extensions.hub ?? missing("hub()"))(this, topic as Topic<unknown>, tenantId) as Hub<T>,
      process: async (rt, o, h) => this.#track(await (extensions.process ?? missing("process()"))(rt, o, h)),
      deadLetters: (rt: TopicRuntime, c: string) => (extensions.deadLetters ?? missing("deadLetters()"))(rt, c),
    };
  }

  get connected(): boolean {
    return this.#connector.connected;
  }

  stats(): SyncStats {
    return { consumers: this.#connector.openConsumers };
  }

  topic<T = unknown>(options: TopicOptions): Topic<T> {
    return new JetStreamTopic<T>(this.#host, resolveTopicOptions(options));
  }

  async ready(): Promise<void> {
    await this.#connector.connection();
  }

  async server(): Promise<NatsServerInfo> {
    const { features, embedded } = await this.#connector.connection();
    const { version, ...uses } = features;
    const info: NatsServerInfo = { version, features: uses };
    if (embedded?.binary && embedded.durability && embedded.dataDir) {
      info.embedded = {
        binary: embedded.binary,
        durability: embedded.durability,
        dataDir: embedded.dataDir,
        ...(embedded.credentials ? { credentialsFile: `${embedded.dataDir}/nats/credentials.json` } : {}),
      };
    }
    return info;
  }

  async listTopics(options: { idPrefix?: string } = {}): Promise<TopicInfo[]> {
    const { jsm } = await this.#connector.connection();
    const prefix = eventStreamPrefix(this.namespace);
    const events: StreamInfo[] = [];
    const deadLetters = new Map<string, number>();
    try {
      for await (const info of jsm.streams.list()) {
        const name = info.config.name;
        if (name.startsWith(prefix)) events.push(info);
        else if (name.startsWith(`TMDL_${this.namespace}_`)) deadLetters.set(name.slice(`TMDL_${this.namespace}_`.length), info.state.messages);
      }
    } catch (err) {
      throw mapNatsError(err, "listTopics");
    }
    const rows: TopicInfo[] = [];
    for (const info of events) {
      const desc = parseDeclaration(info.config);
      if (!desc) continue;
      if (options.idPrefix !== undefined && !desc.topic.startsWith(options.idPrefix)) continue;
      rows.push({
        id: desc.topic,
        owner: desc.owner,
        events: info.state.messages,
        bytes: info.state.bytes,
        firstSequence: info.state.first_seq,
        lastSequence: info.state.last_seq,
        deadLetters: deadLetters.get(info.config.name.slice(prefix.length)) ?? 0,
        retention: { maxAgeMs: Math.round(info.config.max_age / 1e6), maxBytes: info.config.max_bytes },
        replicas: info.config.num_replicas,
      });
    }
    return rows.sort((a, b) => a.id.localeCompare(b.id));
  }

  // Workers still running when the Sync closes are stopped (and drained) first: their
  // in-flight handlers may still ack or dead-letter through this connection. A worker leaves
  // the set only once its stop completed (a stop that timed out has not).
  readonly #workers = new Set<Worker>();

  #track(worker: Worker): Worker {
    this.#workers.add(worker);
    const stop = worker.stop.bind(worker);
    return Object.assign(worker, {
      stop: async (options?: { timeoutMs?: number }) => {
        await stop(options);
        this.#workers.delete(worker);
      },
    });
  }

  /**
   * Stops every worker with a deadline (`timeoutMs`, default {@link CLOSE_WORKER_TIMEOUT_MS}),
   * then closes hubs and the connection in any case, so close() never hangs on a handler that
   * does not end. If one did not, it rejects afterwards with WorkerStopTimeoutError naming it.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? CLOSE_WORKER_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
      throw new InvalidArgumentError(`timeoutMs must be a non-negative integer, got ${String(timeoutMs)}`);
    }
    const stops = await Promise.allSettled([...this.#workers].map((w) => w.stop({ timeoutMs })));
    extensions.closeHubs?.(this);
    await this.#connector.close();
    const failures = stops.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (failures.length === 0) return;
    const timeouts = failures.filter((f): f is WorkerStopTimeoutError => f instanceof WorkerStopTimeoutError);
    throw timeouts.length === failures.length ? WorkerStopTimeoutError.combine(timeouts) : failures[0];
  }
}

/** How long `sync.close()` lets running handlers finish before it closes the connection anyway. */
export const CLOSE_WORKER_TIMEOUT_MS = 10_000;

/** Creates a Sync that you own; it connects on first use. `await sync.close()` releases it. */
export function createSync(options: SyncOptions = {}): Sync {
  return new JetStreamSync(options, currentPlatform());
}

/** @internal A Sync on the given platform, whatever the registered one is. */
export function createSyncOn(p: SyncPlatform, options: SyncOptions = {}): Sync {
  return new JetStreamSync(options, p);
}

let defaultSync: Sync | undefined;

/** Sets the process default Sync (from options, or one you made). Returns it. */
export function configureSync(options: SyncOptions | Sync = {}): Sync {
  defaultSync = isSync(options) ? options : createSync(options);
  return defaultSync;
}

function isSync(v: SyncOptions | Sync): v is Sync {
  return typeof (v as Sync).topic === "function" && typeof (v as Sync).close === "function";
}

/** The process default Sync: the configured one, else one made from the environment. */
export function getDefaultSync(): Sync {
  defaultSync ??= createSync(currentPlatform().defaultOptions());
  return defaultSync;
}

/**
 * Binds a declaration to the process default Sync: the function runs once per Sync, on first
 * call, so a module can declare its topics at import time without connecting.
 * @example const events = lazySync((sync) => sync.topic({ id: "inventory.events" }));
 *          await events().publish({ data });
 */
export function lazySync<R>(declare: (sync: Sync) => R): () => R {
  const cache = new WeakMap<Sync, R>();
  return () => {
    const sync = getDefaultSync();
    if (!cache.has(sync)) cache.set(sync, declare(sync));
    return cache.get(sync)!;
  };
}
