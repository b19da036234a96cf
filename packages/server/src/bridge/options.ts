/**
 * Options of `createBridge()`: the exposed topics, authentication, limits, and operations
 * settings, with their defaults merged and checked once.
 */
import { InvalidArgumentError, type SubscriptionMode } from "@tidemark/shared";
import type { UpgradeWebSocket } from "hono/ws";
import type { Sync, Topic } from "../core/types.js";
import { metersOf } from "../core/sync.js";
import { globalMeters, MeterRegistry } from "../observe/meters.js";
import { bridgeLog, consoleLogger, type Log, type LogFunction, type Logger, type LogLevel } from "./log.js";
import { originCheck, type AllowedOrigins, type OriginCheck } from "./origin.js";
import type { AuthorizeResult } from "./grant.js";

/** What `authorize` is asked about. */
export interface AuthorizeRequest {
  /** The exposed name of the topic (its id unless exposed under another name). */
  topic: string;
  /** The tenant asked for; undefined asks for every tenant's events (see `WHOLE_TOPIC`). */
  tenantId: string | undefined;
  mode: SubscriptionMode;
}

/** A topic reachable through the bridge. Nothing else is. */
export interface ExposedTopic<P = unknown> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  topic: Topic<any>;
  /** The name clients subscribe to. @default topic.id */
  name?: string;
  /**
   * Decides each subscription; checked on every subscribe and resume, and again on refresh.
   * `true` grants a subscribe to the request's tenant; a subscribe without a tenant (every
   * tenant's events) needs `WHOLE_TOPIC` (`{ wholeTopic: true }`), and anything else refuses.
   */
  authorize(principal: P, request: AuthorizeRequest): AuthorizeResult | Promise<AuthorizeResult>;
  /** Modes clients may use. @default ["hub", "live"] */
  modes?: SubscriptionMode[];
}

/** Limits of the bridge; each is answered by an `error` frame naming it. */
export interface BridgeLimits {
  /** Largest inbound frame, in UTF-8 bytes. @default 16384 */
  maxFrameBytes: number;
  /** Open subscriptions per connection. @default 100 */
  maxSubscriptions: number;
  /** Subscribe frames per second per connection (sustained; bursts of twice this). @default 20 */
  subscribeRatePerSecond: number;
  /**
   * `mark_read` frames per second per connection (sustained; bursts of twice this); more are
   * answered with `LIMIT_EXCEEDED` (`mark_read_rate`) and a `retryAfterMs`. @default 10
   */
  markReadRatePerSecond: number;
  /** Open connections per principal on this bridge process. @default 20 */
  maxConnectionsPerPrincipal: number;
  /** Time from open to a valid `hello`, and from token expiry to a `refresh`. @default 10000 */
  unauthenticatedTimeMs: number;
  /**
   * Time to a valid `hello` while at least half of `maxUnauthenticated` sockets are waiting
   * (capped at `unauthenticatedTimeMs`): a crowd of silent sockets is cleared sooner. A socket
   * whose first frame has arrived keeps `unauthenticatedTimeMs`. @default 2000
   */
  unauthenticatedTimeUnderPressureMs: number;
  /**
   * Sockets of this process that have not said a valid `hello` yet. When it is full, a new
   * socket takes the place of the oldest silent one of the address that has the most (closed
   * 1013); it is refused (503) only when none is silent. @default 1000
   */
  maxUnauthenticated: number;
  /**
   * Of those, from one remote address (the TCP peer: a proxy in front shares one; IPv6: one
   * /64, IPv4-mapped IPv6: the IPv4 address). Over it the upgrade is refused with 503. @default 200
   */
  maxUnauthenticatedPerAddress: number;
  /** Socket send buffer above which a connection stops getting events until it drains. @default 1048576 */
  maxBufferedBytes: number;
}

export interface BridgeOptions<P = unknown> {
  /** The topics clients may subscribe to, each with its `authorize` function. */
  topics: ExposedTopic<P>[];
  /**
   * Turns a token (from `hello`, else the cookie) into a principal. Return `null`/`undefined` or
   * throw to refuse. The principal's `expiresAt` (ms since the epoch), if a number, is enforced.
   */
  authenticate(token: string, request: Request): P | null | undefined | Promise<P | null | undefined>;
  /** The runtime's WebSocket upgrade helper (Hono's contract), e.g. from `@hono/node-server`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  upgradeWebSocket: UpgradeWebSocket<any, any>;
  /** The Sync behind the topics: `/readyz` checks it, `/metrics` counts its hub followers. */
  sync?: Sync;
  /**
   * Where the bridge reports its OpenTelemetry metrics (`createMeterRegistry({ meterProvider })`).
   * @default the meters of `sync`, else the process default on the global MeterProvider
   */
  meters?: MeterRegistry;
  /**
   * Allowed `Origin`s of the upgrade: a list of origins (`"https://app.example"`, compared as
   * scheme, host and port), `"*"`, or a function. Requests without an Origin header (non-browser
   * clients) pass unless a function is given. @default same origin, and only when the request's
   * Host is a loopback name (`localhost`, `127.x.x.x`, `[::1]`): set `origins` in production.
   */
  origins?: AllowedOrigins;
  /** Cookie that carries the token when `hello` has none. @default "tidemark_token" */
  cookieName?: string;
  /** Path of the WebSocket endpoint inside the app. @default "/ws" */
  path?: string;
  limits?: Partial<BridgeLimits>;
  /**
   * Server ping interval. A client notices a silent server after 1.6 intervals (16 s by default)
   * and moves on; the server closes a connection silent for five intervals (50 s by default).
   * @default 10000
   */
  heartbeatMs?: number;
  /** Drain: clients are told to reconnect after a random delay up to this. @default 2000 */
  drainSpreadMs?: number;
  /**
   * Warm each exposed topic's hub feed when the bridge is created (hub mode "topic", with
   * `sync`): one whole-topic read of its last `maxBackfillSequences` events into the feed's
   * backlog, the feed held this long (ms) even with no subscriber. Tenants resuming after a
   * restart are then served from memory instead of all waiting for that read while their
   * reconnects starve the process (docs/bridge.md, "Resuming after a restart"). 0: none.
   * @default 0 (`tidemark serve`: 60000)
   */
  warmHubsMs?: number;
  /**
   * Stable key of a principal for the per-principal connection limit (the same user with a new
   * token must get the same key). @default a string principal itself, else its string or number
   * `id`, else its string `sub`; a principal with none of these is refused (INTERNAL, 4500).
   */
  principalKey?: (principal: P) => string;
  /** Token expiry of a principal, ms since the epoch. @default the principal's numeric `expiresAt` */
  expiresAt?: (principal: P) => number | undefined;
  /**
   * The application's logger, pino-shaped (`(fields, msg)` per level, `child(bindings)`); a
   * `(record) => void` function is still accepted for one release. @default the console
   * (`createNodeBridge` and the CLI: pino on stdout)
   */
  logger?: Logger | LogFunction;
  /** Drops records below it. @default the logger's own level (a record function: "info") */
  logLevel?: LogLevel;
}

export const DEFAULT_LIMITS: BridgeLimits = {
  maxFrameBytes: 16 * 1024,
  maxSubscriptions: 100,
  subscribeRatePerSecond: 20,
  markReadRatePerSecond: 10,
  maxConnectionsPerPrincipal: 20,
  unauthenticatedTimeMs: 10_000,
  unauthenticatedTimeUnderPressureMs: 2_000,
  maxUnauthenticated: 1000,
  maxUnauthenticatedPerAddress: 200,
  maxBufferedBytes: 1024 * 1024,
};

/**
 * @internal `createBridge()`'s options with every default applied, checked once. Nothing
 * downstream defaults an option again.
 */
export interface ResolvedBridgeOptions<P> {
  /** Exposed topics by the name clients use. */
  readonly topics: ReadonlyMap<string, ExposedTopic<P>>;
  readonly authenticate: BridgeOptions<P>["authenticate"];
  readonly upgradeWebSocket: BridgeOptions<P>["upgradeWebSocket"];
  readonly sync: Sync | undefined;
  readonly meters: MeterRegistry;
  /** The `origins` option as a check of an upgrade request. */
  readonly originAllowed: OriginCheck;
  readonly cookieName: string;
  readonly path: string;
  readonly limits: Readonly<BridgeLimits>;
  readonly heartbeatMs: number;
  readonly drainSpreadMs: number;
  /** The principal's key for the per-principal limit; undefined when it has none. */
  readonly principalKey: (principal: P) => string | undefined;
  readonly expiresAt: (principal: P) => number | undefined;
  /** The logger, filtered by `logLevel`. */
  readonly log: Log;
}

/** The defaults of the optional settings (the limits' are {@link DEFAULT_LIMITS}). */
const DEFAULTS = {
  cookieName: "tidemark_token",
  path: "/ws",
  heartbeatMs: 10_000,
  drainSpreadMs: 2_000,
  principalKey: defaultPrincipalKey,
  expiresAt: defaultExpiresAt,
  logger: consoleLogger as Logger | LogFunction,
} satisfies Required<Pick<BridgeOptions<unknown>, "cookieName" | "path" | "heartbeatMs" | "drainSpreadMs" | "expiresAt" | "logger">> & {
  // The default may find no key (the principal is then refused); a given principalKey always does.
  principalKey: (principal: unknown) => string | undefined;
};

/** @internal Merges the defaults into `options` and checks them; throws InvalidArgumentError naming a bad field. */
export function resolveOptions<P>(options: BridgeOptions<P>): ResolvedBridgeOptions<P> {
  const merged = { ...DEFAULTS, ...definedOnly(options) };
  if (!(merged.heartbeatMs > 0)) throw new InvalidArgumentError("heartbeatMs must be positive");
  if (options.meters !== undefined && !(options.meters instanceof MeterRegistry)) {
    throw new InvalidArgumentError("meters must be a registry made by createMeterRegistry()");
  }
  return {
    topics: exposedByName(options.topics),
    authenticate: options.authenticate,
    upgradeWebSocket: options.upgradeWebSocket,
    sync: options.sync,
    meters: options.meters ?? (options.sync && metersOf(options.sync)) ?? globalMeters,
    originAllowed: originCheck(options.origins),
    cookieName: merged.cookieName,
    path: merged.path,
    limits: resolveLimits(options.limits),
    heartbeatMs: merged.heartbeatMs,
    drainSpreadMs: merged.drainSpreadMs,
    principalKey: merged.principalKey as (principal: P) => string | undefined,
    expiresAt: merged.expiresAt as (principal: P) => number | undefined,
    log: bridgeLog(merged.logger, merged.logLevel),
  };
}

/** `options` without its undefined fields, so that `{ path: undefined }` keeps the default. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function exposedByName<P>(exposed: ExposedTopic<P>[]): Map<string, ExposedTopic<P>> {
  const topics = new Map<string, ExposedTopic<P>>();
  for (const entry of exposed) {
    if (typeof entry.authorize !== "function") {
      throw new InvalidArgumentError(`exposed topic ${entry.name ?? entry.topic?.id} needs an authorize function`);
    }
    const name = entry.name ?? entry.topic.id;
    if (topics.has(name)) throw new InvalidArgumentError(`topic ${name} is exposed twice`);
    topics.set(name, entry);
  }
  return topics;
}

function resolveLimits(limits: Partial<BridgeLimits> = {}): BridgeLimits {
  const out = { ...DEFAULT_LIMITS, ...limits };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value !== "number" || !(value > 0)) {
      throw new InvalidArgumentError(`bridge limit ${key} must be a positive number, got ${String(value)}`);
    }
  }
  return out;
}

/**
 * @internal The stable id of a principal, or undefined when it has none. Never the JSON of the
 * principal: that changes with every token (`expiresAt`), so each token would count as a new
 * principal and the per-principal limit would never bite.
 */
export function defaultPrincipalKey(principal: unknown): string | undefined {
  if (typeof principal === "string") return principal || undefined;
  const p = principal as { id?: unknown; sub?: unknown } | null;
  if (p && typeof p.id === "string" && p.id !== "") return p.id;
  if (p && typeof p.id === "number" && Number.isFinite(p.id)) return String(p.id);
  if (p && typeof p.sub === "string" && p.sub !== "") return p.sub;
  return undefined;
}

/** @internal */
export function defaultExpiresAt(principal: unknown): number | undefined {
  const e = (principal as { expiresAt?: unknown } | null)?.expiresAt;
  return typeof e === "number" ? e : undefined;
}
