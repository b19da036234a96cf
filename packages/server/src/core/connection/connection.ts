/**
 * One Sync's NATS connection: a managed (embedded) nats-server when no URL is configured and the
 * platform has one, otherwise the configured servers, reached through the platform's transport
 * (TCP on Node, WebSocket elsewhere). Connects on first use; a failed connect is retried on the
 * next use. Runtime-neutral: no Node module here.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { BrokerUnavailableError, ClosedError, InvalidArgumentError } from "@tidemark/shared";
import type { EmbeddedNatsOptions } from "../../broker/embedded-options.js";
import type { ExternalNatsOptions, ManagedNats, NatsTransport } from "../../transport/types.js";
import { natsConnectionDefaults } from "../../transport/options.js";
import { mapNatsError } from "../errors.js";
import { featuresOf, type ServerFeatures } from "../../broker/features.js";
import { ConnectionDrops } from "./connection-drops.js";
import { CONNECT_WAIT_MS, PublishRequests } from "../publish/publish-request.js";
import { sleep } from "../sleep.js";
import type { BrokerInUse } from "./broker-log.js";

export interface ConnectorOptions {
  /** How connections are opened (TCP on Node, WebSocket elsewhere). */
  transport: NatsTransport<EmbeddedNatsOptions>;
  nats?: ExternalNatsOptions;
  embedded?: EmbeddedNatsOptions;
  /** Bound on every broker request (one publish attempt included). @default 5000 */
  requestTimeoutMs?: number;
  /** Bound on a whole `publish()`, retries included (capped at the topic's dedupe window). @default 10000 */
  publishTimeoutMs?: number;
  /** How long a publish attempt waits for a connection that is down. @default 2000 */
  connectWaitMs?: number;
  /** Told once, when the connection first comes up, which broker it reached. */
  connected?(broker: BrokerInUse): void;
}

/** Live handles. */
export interface Connection {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Core NATS max_payload of the server. */
  maxPayload: number;
  /** Server version, e.g. "2.9.10". */
  serverVersion: string;
  /** What the server can do, from its version. */
  features: ServerFeatures;
  embedded?: ManagedNats;
}

/** Parses `TIDEMARK_NATS_URL`-style lists. */
export function parseServers(servers: string | string[]): string[] {
  const list = (Array.isArray(servers) ? servers : servers.split(",")).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError("nats.servers is empty");
  return list;
}

export class Connector {
  readonly #options: ConnectorOptions;
  #pending: Promise<Connection> | undefined;
  #current: Connection | undefined;
  #closed = false;

  constructor(options: ConnectorOptions) {
    this.#options = options;
  }

  get requestTimeoutMs(): number {
    return this.#options.requestTimeoutMs ?? 5_000;
  }

  /** JetStream consumers that reads (replay, follow, hubs) of this Sync hold open now. */
  openConsumers = 0;

  get publishTimeoutMs(): number {
    return this.#options.publishTimeoutMs ?? 10_000;
  }

  get connectWaitMs(): number {
    return this.#options.connectWaitMs ?? CONNECT_WAIT_MS;
  }

  /** True while the connection is up (false before first use). */
  get connected(): boolean {
    const nc = this.#current?.nc;
    return !!nc && !nc.isClosed() && !nc.isDraining() && nc.info !== undefined && !this.drops.down;
  }

  connection(): Promise<Connection> {
    if (this.#closed) return Promise.reject(new ClosedError("this Sync is closed"));
    if (!this.#pending) {
      this.#pending = this.#open().catch((err) => {
        this.#pending = undefined;
        throw err;
      });
    }
    return this.#pending;
  }

  async #open(): Promise<Connection> {
    const { transport } = this.#options;
    let embedded: ManagedNats | undefined;
    let servers: string[];
    if (this.#options.nats) {
      servers = parseServers(this.#options.nats.servers);
    } else if (transport.startManaged) {
      embedded = await transport.startManaged(this.#options.embedded);
      servers = [embedded.url];
    } else {
      throw new InvalidArgumentError(`nats.servers is required: the ${transport.kind} transport has no embedded server`);
    }
    const { servers: _ignored, ...rest } = this.#options.nats ?? { servers: [] };
    let nc: NatsConnection;
    try {
      // Defaults in transport/options.ts (why each value); the application's `nats` options win.
      // A transport resolves to nats.js's NatsConnection; its public type names only a few members
      // (transport/types.ts says why).
      nc = (await transport.connect({
        ...natsConnectionDefaults(),
        ...embedded?.credentials,
        ...rest,
        servers,
      })) as NatsConnection;
    } catch (err) {
      await embedded?.stop();
      throw new BrokerUnavailableError(`cannot connect to NATS at ${servers.join(",")}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    void this.#watch(nc);
    const jsm = await this.#jetstreamManager(nc).catch(async (err) => {
      await nc.close();
      await embedded?.stop();
      throw err;
    });
    const js = jetstream(nc, { timeout: this.requestTimeoutMs });
    const conn: Connection = {
      nc,
      js,
      jsm,
      maxPayload: nc.info?.max_payload ?? 1024 * 1024,
      serverVersion: nc.info?.version ?? "0.0.0",
      features: featuresOf(nc.info?.version ?? "0.0.0"),
      embedded,
    };
    this.#current = conn;
    if (this.#closed) {
      await this.#shutdown(conn);
      throw new ClosedError("this Sync is closed");
    }
    this.#options.connected?.(
      embedded
        ? { kind: "embedded", url: embedded.url, dataDir: embedded.dataDir, version: conn.serverVersion }
        : { kind: "external", servers, version: conn.serverVersion },
    );
    return conn;
  }

  // JetStream may need a moment after the listeners open (store recovery): retry briefly.
  async #jetstreamManager(nc: NatsConnection): Promise<JetStreamManager> {
    const deadline = Date.now() + Math.max(this.requestTimeoutMs, 10_000);
    for (;;) {
      try {
        return await jetstreamManager(nc, { timeout: this.requestTimeoutMs });
      } catch (err) {
        if (Date.now() > deadline) {
          throw new BrokerUnavailableError(`JetStream is not available on the NATS server: ${(err as Error).message}`, {
            cause: err,
          });
        }
        await sleep(200);
      }
    }
  }

  /**
   * Drops of the connection (stale or lost). A request in flight on it then gets no answer
   * (nats.js lets it run to its timeout), so a publish attempt stops waiting for it.
   */
  readonly drops = new ConnectionDrops();

  readonly #publishRequests = new WeakMap<NatsConnection, PublishRequests>();

  /** The publish requests of `nc` (one inbox subscription per connection), made on first use. */
  publishRequests(nc: NatsConnection): PublishRequests {
    let requests = this.#publishRequests.get(nc);
    if (requests === undefined) this.#publishRequests.set(nc, (requests = new PublishRequests(nc, this.drops, { connectWaitMs: this.connectWaitMs })));
    return requests;
  }

  /** Resolves when the connection next drops (a new promise after each drop). */
  connectionLost(): Promise<void> {
    return this.drops.lost;
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") this.drops.disconnected(s.server);
      else if (s.type === "reconnecting") this.drops.dialing();
      else if (s.type === "reconnect") this.drops.reconnected();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#pending;
    this.#pending = undefined;
    if (!pending) return;
    const conn = await pending.catch(() => undefined);
    if (conn) await this.#shutdown(conn);
  }

  async #shutdown(conn: Connection): Promise<void> {
    try {
      await conn.nc.drain();
    } catch {
      await conn.nc.close().catch(() => undefined);
    }
    await conn.embedded?.stop();
  }

  /** @internal */
  mapError(err: unknown, context?: string): Error {
    return mapNatsError(err, context);
  }
}
