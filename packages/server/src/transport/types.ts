/**
 * The NATS transport seam: how the core and the bridge get their NATS connection. Node uses TCP
 * (`@nats-io/transport-node`), other runtimes `wsconnect` over WebSocket. One process uses one
 * transport: the NATS client keeps a global transport factory, and mixing them stalls reconnects.
 *
 * The NATS shapes of Tidemark's public API are declared here, not imported: any import of
 * `@nats-io/nats-core` in a published `.d.ts` loads all of its declarations, two of which
 * (`MsgImpl`, `NatsConnectionImpl`) fail to type-check under `exactOptionalPropertyTypes`. They
 * copy nats-core 3.x (`ConnectionOptions` and the types it names), so values
 * of either type fit the other; `types.test.ts` checks that both ways against the installed NATS.
 */

/** What an authenticator returns: nothing, a token, user and password, an nkey or a JWT (nats-core `Auth`). */
export type NatsAuth = void | { auth_token: string } | { user: string; pass?: string } | { nkey: string; sig: string } | { jwt: string; nkey?: string; sig?: string };

/** Credentials for each connect, given the server's nonce (nats-core `Authenticator`, e.g. `credsAuthenticator()`). */
export type NatsAuthenticator = (nonce?: string) => NatsAuth;

/** TLS of a NATS connection (nats-core `TlsOptions`). */
export interface NatsTlsOptions {
  handshakeFirst?: boolean;
  certFile?: string;
  cert?: string;
  caFile?: string;
  ca?: string;
  keyFile?: string;
  key?: string;
}

/** One server of the client's pool (nats-core `Server`). */
export interface NatsServerEntry {
  readonly hostname: string;
  readonly port: number;
  readonly listen: string;
  readonly src: string;
  readonly tlsName: string;
  readonly reconnects: number;
  readonly lastConnect: number;
  readonly gossiped: boolean;
  readonly didConnect: boolean;
}

/** The INFO message of a NATS server (nats-core `ServerInfo`). */
export interface NatsInfo {
  auth_required?: boolean;
  client_id: number;
  client_ip?: string;
  cluster?: string;
  connect_urls?: string[];
  git_commit?: string;
  go: string;
  headers?: boolean;
  host: string;
  jetstream?: boolean;
  ldm?: boolean;
  max_payload: number;
  nonce?: string;
  port: number;
  proto: number;
  server_id: string;
  server_name: string;
  tls_available?: boolean;
  tls_required?: boolean;
  tls_verify?: boolean;
  version: string;
  api_lvl?: number;
}

/**
 * Picks the server of the next reconnect, and optionally a delay before it; null: the default
 * order (nats-core `ReconnectToServerHandler`; `info` is the last server's INFO).
 */
export type NatsReconnectToServer = (
  pool: ReadonlyArray<NatsServerEntry>,
  info: NatsInfo | null,
) => NatsServerEntry | { server: NatsServerEntry; delay: number } | null;

/**
 * Options of a NATS connection: nats-core's `ConnectionOptions`, field for field (see the nats.js
 * documentation for each). Tidemark's own defaults (`transport/options.ts`) apply first.
 */
export interface NatsConnectionOptions {
  authenticator?: NatsAuthenticator | NatsAuthenticator[];
  debug?: boolean;
  maxPingOut?: number;
  maxReconnectAttempts?: number;
  name?: string;
  noEcho?: boolean;
  noRandomize?: boolean;
  pass?: string;
  pedantic?: boolean;
  pingInterval?: number;
  port?: number;
  reconnect?: boolean;
  reconnectDelayHandler?: () => number;
  reconnectJitter?: number;
  reconnectJitterTLS?: number;
  reconnectTimeWait?: number;
  servers?: Array<string> | string;
  timeout?: number;
  tls?: NatsTlsOptions | null;
  token?: string;
  user?: string;
  verbose?: boolean;
  waitOnFirstConnect?: boolean;
  ignoreClusterUpdates?: boolean;
  inboxPrefix?: string;
  ignoreAuthErrorAbort?: boolean;
  noAsyncTraces?: boolean;
  resolve?: boolean;
  reconnectToServer?: NatsReconnectToServer;
}

/** Connection to an existing NATS server or cluster. */
export interface ExternalNatsOptions extends Omit<NatsConnectionOptions, "servers"> {
  /** One URL, a comma-separated list, or an array (`nats://` on Node, `ws://`/`wss://` on edge runtimes). */
  servers: string | string[];
}

/**
 * The connection a `NatsConnect` resolves to. It must be nats.js's `NatsConnection` (what
 * `connect` and `wsconnect` return, or a wrapper of one): Tidemark uses all of it; the type
 * names only a few of its members to keep nats.js's declarations out of Tidemark's.
 */
export interface NatsConnectionLike {
  getServer(): string;
  isClosed(): boolean;
  isDraining(): boolean;
  flush(): Promise<void>;
  drain(): Promise<void>;
  close(): Promise<void>;
  closed(): Promise<void | Error>;
}

/**
 * Opens a NATS connection (`connect` of transport-node, `wsconnect` of nats-core, or your own).
 * @example const connect: NatsConnect = (options) => wsconnect({ ...options, token: myToken() });
 */
export type NatsConnect = (options: NatsConnectionOptions) => Promise<NatsConnectionLike>;

/** A managed nats-server the connector started and stops (Node only: the embedded server). */
export interface ManagedNats {
  readonly url: string;
  /** JetStream file-store limit, named in storage errors. */
  readonly maxFileStore?: number;
  /** What the connection logs in with (the embedded server's per-data-directory credentials). */
  readonly credentials?: { user: string; pass: string };
  /** The binary, its version and the durability in force, for `sync.server()` and logs. */
  readonly binary?: string;
  readonly version?: string;
  readonly durability?: "fsync" | "buffered";
  readonly dataDir?: string;
  stop(graceMs?: number): Promise<void>;
}

/** What a Sync needs from its platform. */
export interface NatsTransport<E = unknown> {
  /** `"tcp"` or `"websocket"`: named in errors and docs. */
  readonly kind: "tcp" | "websocket";
  readonly connect: NatsConnect;
  /** Starts a managed server when no URL is configured; absent where there is none (edge). */
  readonly startManaged?: (options: E | undefined) => Promise<ManagedNats>;
}
