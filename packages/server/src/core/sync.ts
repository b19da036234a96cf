/**
 * The Sync of the topic core: one NATS connection, the topics declared on it, and what the
 * platform hands it. Nothing is registered by importing a module: an entry point builds its
 * platform (transport, hubs, workers) and passes it to {@link createSyncWith} — the Node entry
 * in `../node-sync.ts`, the edge entry in `../edge/platform.ts`. A deep import of this module
 * alone gets {@link createCoreSync}, whose topics type-check against what the core can do.
 */
import { assertNamespace, InvalidArgumentError, WorkerStopTimeoutError } from "@tidemark/shared";
import type { StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { Connector } from "./connection/connection.js";
import type { EmbeddedNatsOptions } from "../broker/embedded-options.js";
import { resolveTopicOptions } from "./options.js";
import { JetStreamTopic, type TopicHost } from "./topic.js";
import { parseDeclaration } from "./resources/streams.js";
import { deadLetterStreamPrefix, eventStreamPrefix } from "./resources/broker-names.js";
import type { CoreSync, Hub, NatsServerInfo, Sync, SyncStats, Topic, TopicInfo, TopicOptions, Worker } from "./types.js";
import { mapNatsError } from "./errors.js";
import type { ExternalNatsOptions, NatsTransport } from "../transport/types.js";
import type { HubRegistryOptions } from "./hub-options.js";
import { brokerLine, silentLogger, stderrLogger, type BrokerSource, type SyncLogger } from "./connection/broker-log.js";
import { globalMeters, MeterRegistry } from "../observe/meters.js";

export interface SyncOptions {
  /** Prefix of every stream and subject; lets applications share one broker. @default TIDEMARK_NAMESPACE or "app" */
  namespace?: string;
  /**
   * An existing NATS server or cluster. Precedence: `nats`, else `embedded`, else the platform's
   * default (Node: `TIDEMARK_NATS_URL`, else the embedded server under `TIDEMARK_DATA_DIR`).
   * @default TIDEMARK_NATS_URL, else embedded
   */
  nats?: ExternalNatsOptions;
  /** The embedded nats-server, chosen explicitly (wins over `TIDEMARK_NATS_URL`); ignored when `nats` is given. */
  embedded?: EmbeddedNatsOptions;
  /**
   * Where the Sync logs, once, which broker it uses (at its first connection); pino-shaped.
   * `false`: nothing. @default one line on stderr
   */
  logger?: SyncLogger | false;
  /** Bound on one broker request (one publish attempt included) while the broker is away. @default 5000 */
  requestTimeoutMs?: number;
  /**
   * How long a publish waits for a connection that is down (reconnecting) before it fails with
   * nothing sent (`maybeStored: false`); a failover to another server takes one dial. @default 2000
   */
  connectWaitMs?: number;
  /**
   * Bound on a whole `publish()`: transient failures are retried with the same message id until
   * then, so one call stores at most one event. Capped at the topic's `dedupeWindowMs`. @default 10000
   */
  publishTimeoutMs?: number;
  /** Settings of the Sync's hubs (`topic.hub()`): window sizes, watermark refresh. See `HubRegistryOptions`. */
  hubs?: HubRegistryOptions;
  /**
   * Where its publishes, workers and hubs record metrics (`createMeterRegistry({ meterProvider })`);
   * a bridge given this Sync reports there too unless it has `meters` of its own.
   * @default the process default, on the global MeterProvider of `@opentelemetry/api`
   */
  meters?: MeterRegistry;
}

/** @internal The hubs of one Sync: made on its first `topic.hub()`, closed with it. */
export interface HubSet {
  get<T>(topic: Topic<T>, tenantId: string | undefined): Hub<T>;
  close(): void;
}

/** @internal `topic.process()` and `topic.deadLetters()`: the worker module (`../process`). */
export interface Workers {
  process: TopicHost["process"];
  deadLetters: TopicHost["deadLetters"];
}

/** @internal What the core alone needs: a NATS transport (and where the namespace defaults from). */
export interface CorePlatform {
  readonly transport: NatsTransport<EmbeddedNatsOptions>;
  /** Namespace when the options name none (Node: TIDEMARK_NAMESPACE). @default none: "app" */
  defaultNamespace?(): string | undefined;
  /** The broker when the options name none (Node: TIDEMARK_NATS_URL, else embedded). @default none: embedded */
  defaultBroker?(): DefaultBroker;
}

/** @internal The platform's choice of broker, and what made it. */
export interface DefaultBroker {
  nats?: ExternalNatsOptions;
  embedded?: EmbeddedNatsOptions;
  from: BrokerSource;
}

/** Options > the platform's default (the environment) > the embedded server. */
function chooseBroker(options: SyncOptions, p: CorePlatform): DefaultBroker {
  if (options.nats) return { nats: options.nats, from: "options" };
  if (options.embedded) return { embedded: options.embedded, from: "options" };
  return p.defaultBroker?.() ?? { from: "default" };
}

function loggerOf(logger: SyncOptions["logger"]): SyncLogger {
  if (logger === undefined) return stderrLogger;
  if (logger === false) return silentLogger;
  if (typeof logger !== "object" || logger === null || typeof logger.info !== "function") {
    throw new InvalidArgumentError("logger must be a pino-shaped logger (info, warn, error) or false");
  }
  return logger;
}

/** @internal A whole platform: the core's transport, plus the hub and worker modules. */
export interface SyncPlatform extends CorePlatform {
  /** Makes the hubs of one Sync (`HubRegistry` in `../hub`), reporting to the Sync's meters. */
  hubs(options: HubRegistryOptions | undefined, meters: MeterRegistry): HubSet;
  readonly workers: Workers;
}

function missing(what: string): never {
  throw new InvalidArgumentError(`${what} is not available on a Sync made by createCoreSync(): use createSync() of "@tidemark/server" or "@tidemark/server/edge"`);
}

class JetStreamSync implements Sync {
  readonly namespace: string;
  /** @internal Where this Sync, its hubs and workers record metrics. */
  readonly meters: MeterRegistry;
  readonly #connector: Connector;
  readonly #host: TopicHost;

  readonly #hubOptions: HubRegistryOptions | undefined;
  readonly #makeHubs: SyncPlatform["hubs"] | undefined;
  #hubs: HubSet | undefined;

  constructor(options: SyncOptions, p: CorePlatform & Partial<SyncPlatform>) {
    const namespace = options.namespace ?? p.defaultNamespace?.() ?? "app";
    assertNamespace(namespace);
    this.namespace = namespace;
    this.#hubOptions = options.hubs;
    this.#makeHubs = p.hubs;
    if (options.meters !== undefined && !(options.meters instanceof MeterRegistry)) {
      throw new InvalidArgumentError("meters must be a registry made by createMeterRegistry()");
    }
    this.meters = options.meters ?? globalMeters;
    const broker = chooseBroker(options, p);
    const logger = loggerOf(options.logger);
    const { connectWaitMs } = options;
    if (connectWaitMs !== undefined && !(Number.isFinite(connectWaitMs) && connectWaitMs >= 0)) {
      throw new InvalidArgumentError(`connectWaitMs must be a non-negative number of milliseconds, got ${String(connectWaitMs)}`);
    }
    this.#connector = new Connector({
      transport: p.transport,
      nats: broker.nats,
      embedded: broker.embedded,
      requestTimeoutMs: options.requestTimeoutMs,
      publishTimeoutMs: options.publishTimeoutMs,
      connectWaitMs,
      // Once per Sync: the connector opens one connection for its whole life.
      connected: (inUse) => {
        const { fields, msg } = brokerLine(namespace, broker.from, inUse);
        logger.info(fields, msg);
      },
    });
    const workers = p.workers;
    this.#host = {
      namespace,
      connector: this.#connector,
      meters: this.meters,
      hub: <T>(topic: Topic<T>, tenantId: string | undefined) => this.hubs().get(topic, tenantId),
      process: async (rt, o, h) => this.#track(await (workers ?? missing("topic.process()")).process(rt, o, h)),
      deadLetters: (rt, c) => (workers ?? missing("topic.deadLetters()")).deadLetters(rt, c),
    };
  }

  /** @internal This Sync's hubs, made on first use by the platform's hub module. */
  hubs(): HubSet {
    if (!this.#makeHubs) missing("topic.hub()");
    this.#hubs ??= this.#makeHubs(this.#hubOptions, this.meters);
    return this.#hubs;
  }

  /** @internal Publish attempts on `nc` waiting for an answer (for tests). */
  publishesPending(nc: NatsConnection): number {
    return this.#connector.publishRequests(nc).size;
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
    const deadLetterPrefix = deadLetterStreamPrefix(this.namespace);
    const events: StreamInfo[] = [];
    const deadLetters = new Map<string, number>();
    try {
      for await (const info of jsm.streams.list()) {
        const name = info.config.name;
        if (name.startsWith(prefix)) events.push(info);
        else if (name.startsWith(deadLetterPrefix)) deadLetters.set(name.slice(deadLetterPrefix.length), info.state.messages);
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
    this.#hubs?.close();
    this.#hubs = undefined;
    await this.#connector.close();
    const failures = stops.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (failures.length === 0) return;
    const timeouts = failures.filter((f): f is WorkerStopTimeoutError => f instanceof WorkerStopTimeoutError);
    throw timeouts.length === failures.length ? WorkerStopTimeoutError.combine(timeouts) : failures[0];
  }
}

/** How long `sync.close()` lets running handlers finish before it closes the connection anyway. */
export const CLOSE_WORKER_TIMEOUT_MS = 10_000;

/** @internal A Sync on a whole platform: what `createSync()` of each entry point calls. */
export function createSyncWith(platform: SyncPlatform, options: SyncOptions = {}): Sync {
  return new JetStreamSync(options, platform);
}

/**
 * @internal A Sync of the core alone: publish and read, no hubs, no workers (its topics' types
 * have no `hub()`, `process()` or `deadLetters()`).
 * @example const sync = createCoreSync({ transport: nodeTransport }, { nats: { servers: url } });
 */
export function createCoreSync(platform: CorePlatform, options: SyncOptions = {}): CoreSync {
  return new JetStreamSync(options, platform);
}

/** @internal Publish attempts of `sync` on `nc` waiting for an answer (for tests). */
export function publishesPending(sync: CoreSync, nc: NatsConnection): number {
  if (!(sync instanceof JetStreamSync)) throw new InvalidArgumentError("not a Sync made by createSync()");
  return sync.publishesPending(nc);
}

/** @internal The meter registry of a Sync made by `createSync()`; undefined for another Sync. */
export function metersOf(sync: CoreSync): MeterRegistry | undefined {
  return sync instanceof JetStreamSync ? sync.meters : undefined;
}

/** @internal The hubs of a Sync made by an entry point (what `hubRegistryOf()` reads). */
export function hubsOf(sync: CoreSync): HubSet {
  if (!(sync instanceof JetStreamSync)) throw new InvalidArgumentError("not a Sync made by createSync()");
  return sync.hubs();
}
