/**
 * `createBridge()`: a Hono app that exposes hub and live subscriptions of chosen topics over
 * WebSockets, plus `/healthz`, `/readyz` and `/metrics`. Runtime-neutral: it takes the
 * runtime's `upgradeWebSocket` (Hono's contract); `node.ts` is the Node entry.
 */
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { WSContext } from "hono/ws";
import { CloseCode, InvalidArgumentError, type SubscriptionMode } from "@tidemark/shared";
import { HubRegistry } from "../hub/registry.js";
import { hubRegistryOf } from "../hub/install.js";
import { Connection } from "./connection.js";
import { HubIds, SEND_TEXT_BYTES, type BridgeCore, type BridgeSocket, type FrameText, type TextBytesSender } from "./core.js";

const encoder = new TextEncoder();
import { EventFrames, encode } from "./frames.js";
import { jsonLogger, leveled } from "./log.js";
import { BridgeMetrics } from "./metrics.js";
import { observeBridge } from "../observe/bridge-meter.js";
import { resolveLimits, type BridgeLimits, type BridgeOptions, type ExposedTopic } from "./options.js";
import { originCheck } from "./origin.js";
import { PrincipalCounts } from "./principals.js";
import { UnauthenticatedCount, remoteAddressOf } from "./unauthenticated.js";

/** A running bridge: its Hono app and its operations. */
export interface Bridge {
  /** Mount it (`app.route("/realtime", bridge.app)`) or serve it as is. */
  readonly app: Hono;
  readonly limits: Readonly<BridgeLimits>;
  /** Open WebSocket connections. */
  readonly connectionCount: number;
  /** True once `drain()` was called. */
  readonly draining: boolean;
  /** The Prometheus text of `/metrics`. */
  metrics(): string;
  /** Authorizes every open subscription again (after permissions changed). */
  reauthorize(): Promise<void>;
  /** Runs `authenticate` again on every connection's token: revoked tokens lose their connection. */
  reauthenticate(): Promise<void>;
  /**
   * Graceful shutdown: refuses new connections, sends `drain` to every client, and closes the
   * sockets (1001) after `graceMs`. Resolves when every connection is closed.
   */
  drain(options?: { graceMs?: number }): Promise<void>;
  /** Drains (grace 0), stops timers, retires the bridge's own hubs. */
  close(): Promise<void>;
}

const HEARTBEAT_MS = 25_000;

/** The bridge's view of a Hono WSContext (a class: no per-socket closures). */
class ContextSocket implements BridgeSocket {
  readonly #ws: WSContext;
  constructor(ws: WSContext) {
    this.#ws = ws;
  }
  send(data: string): void {
    this.#ws.send(data);
  }
  sendFrame(frame: FrameText): void {
    const fast = (this.#ws as unknown as { [SEND_TEXT_BYTES]?: TextBytesSender })[SEND_TEXT_BYTES];
    if (!fast) return this.#ws.send(frame.text);
    fast.sendTextBytes((frame.bytes ??= encoder.encode(frame.text)));
  }
  close(code: number, reason: string): void {
    this.#ws.close(code, reason);
  }
  get bufferedAmount(): number {
    // `ws`, browsers, Deno: bufferedAmount; Bun: getBufferedAmount()
    const raw = this.#ws.raw as { bufferedAmount?: number; getBufferedAmount?: () => number } | undefined;
    if (!raw) return 0;
    return typeof raw.bufferedAmount === "number" ? raw.bufferedAmount : (raw.getBufferedAmount?.() ?? 0);
  }
}

/**
 * The WebSocket events of one socket. A class, not an object of closures: these live as long as
 * the socket, and per-socket closures (and a kept upgrade request) add up at 10,000 sockets.
 */
class SocketEvents<P> {
  readonly #core: BridgeCore<P>;
  #request: Request | undefined;
  #cookieToken: string | undefined;
  readonly #address: string | undefined;
  #connection: Connection<P> | undefined;

  constructor(core: BridgeCore<P>, request: Request, cookieToken: string | undefined, address: string | undefined) {
    this.#core = core;
    this.#request = request;
    this.#cookieToken = cookieToken;
    this.#address = address;
  }

  onOpen(_event: Event, ws: WSContext): void {
    const core = this.#core;
    // The upgrade checked the caps; upgrades that raced past that check are closed here.
    if (!core.unauthenticated.add(this.#address)) {
      this.#request = undefined;
      core.metrics.bump(core.metrics.rejected, "unauthenticated_connections");
      ws.close(CloseCode.TryAgainLater, "too many connections waiting for hello");
      return;
    }
    const connection = new Connection<P>(core, new ContextSocket(ws), this.#request!, this.#cookieToken, { address: this.#address });
    this.#connection = connection;
    this.#request = undefined;
    this.#cookieToken = undefined;
    core.connections.add(connection);
    core.metrics.connections++;
    if (core.draining) {
      connection.send(encode({ type: "drain", retryAfterMs: Math.round(Math.random() * (core.options.drainSpreadMs ?? 2000)) }));
      connection.close(CloseCode.GoingAway, "draining");
    }
  }

  onMessage(event: MessageEvent): void {
    this.#connection?.onMessage(event.data);
  }

  onClose(): void {
    this.#connection?.onClose();
  }

  onError(): void {
    this.#connection?.onClose();
  }
}

/**
 * Creates a bridge.
 *
 * @example
 * import { upgradeWebSocket } from "@hono/node-server";
 * const bridge = createBridge({
 *   topics: [{ topic: notifications(), authorize: (user, { tenantId }) => tenantId === user.id }],
 *   authenticate: (token) => verify(token),
 *   upgradeWebSocket,
 *   sync,
 * });
 */
export function createBridge<P = unknown>(options: BridgeOptions<P>): Bridge {
  const limits = resolveLimits(options.limits);
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  if (!(heartbeatMs > 0)) throw new InvalidArgumentError("heartbeatMs must be positive");
  const topics = new Map<string, ExposedTopic<P>>();
  for (const exposed of options.topics) {
    if (typeof exposed.authorize !== "function") {
      throw new InvalidArgumentError(`exposed topic ${exposed.name ?? exposed.topic?.id} needs an authorize function`);
    }
    const name = exposed.name ?? exposed.topic.id;
    if (topics.has(name)) throw new InvalidArgumentError(`topic ${name} is exposed twice`);
    topics.set(name, exposed);
  }
  const path = options.path ?? "/ws";
  const cookieName = options.cookieName ?? "tidemark_token";
  const log = leveled(options.logger ?? jsonLogger, options.logLevel ?? "info");
  const fallbackHubs = new HubRegistry();
  const originAllowed = originCheck(options.origins);
  const warned = new Set<string>();

  const paused = new Set<{ checkDrained(): boolean }>();
  let pollTimer: ReturnType<typeof setInterval> | undefined;
  const core: BridgeCore<P> = {
    options,
    limits,
    heartbeatMs,
    metrics: new BridgeMetrics(),
    frames: new EventFrames(),
    topics,
    hubIds: new HubIds(),
    fallbackHubs,
    principals: new PrincipalCounts(limits.maxConnectionsPerPrincipal),
    unauthenticated: new UnauthenticatedCount(limits),
    connections: new Set(),
    log,
    warnOnce(key, msg) {
      if (warned.has(key)) return;
      warned.add(key);
      log("warn", msg);
    },
    draining: false,
    watchPaused(connection) {
      paused.add(connection);
      pollTimer ??= setInterval(() => {
        for (const c of paused) if (c.checkDrained()) paused.delete(c);
        if (paused.size === 0) {
          clearInterval(pollTimer);
          pollTimer = undefined;
        }
      }, 20);
    },
  };

  // One timer for every connection's deadlines and heartbeats: no timer per socket. Each
  // connection is pinged heartbeatMs after its last ping, so pings spread over the interval
  // as connections arrived instead of 10,000 going out in one tick.
  const ping = encode({ type: "ping" });
  const ticker = setInterval(
    () => {
      const now = Date.now();
      for (const c of core.connections) {
        c.tick(now);
        if (c.state === "new" || c.state === "closed") continue;
        if (now - c.lastSeen > 2 * heartbeatMs) c.close(CloseCode.Timeout, "no heartbeat");
        else if (now >= c.nextPingAt) {
          c.nextPingAt = now + heartbeatMs;
          c.send(ping);
        }
      }
    },
    Math.max(10, Math.min(1000, limits.unauthenticatedTimeMs / 4, heartbeatMs / 4)),
  );
  ticker.unref?.();

  const app = new Hono();
  const upgrade = options.upgradeWebSocket((c) => new SocketEvents(core, c.req.raw, getCookie(c, cookieName), remoteAddressOf(c.env)));

  app.get(path, async (c, next) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return c.text("WebSocket upgrade required", 426);
    if (core.draining) {
      core.metrics.bump(core.metrics.rejected, "draining");
      return c.text("draining", 503);
    }
    if (!originAllowed(c.req.raw)) {
      core.metrics.bump(core.metrics.rejected, "origin");
      log("warn", "origin refused", { origin: c.req.header("origin") ?? null, host: c.req.header("host") ?? null });
      return c.text("origin not allowed", 403);
    }
    if (!core.unauthenticated.admits(remoteAddressOf(c.env))) {
      core.metrics.bump(core.metrics.rejected, "unauthenticated_connections");
      core.warnOnce("unauthenticated_connections", "too many sockets waiting for hello: upgrades refused (maxUnauthenticated, maxUnauthenticatedPerAddress)");
      return c.text("too many connections waiting for hello", 503);
    }
    return upgrade(c, next);
  });

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  let jsProbe: { at: number; ok: boolean } | undefined;
  app.get("/readyz", async (c) => {
    const checks: Record<string, boolean> = { accepting: !core.draining };
    const sync = options.sync;
    if (sync) {
      checks.nats = sync.connected;
      if (!jsProbe || Date.now() - jsProbe.at > 5_000) {
        let ok = false;
        try {
          await Promise.race([sync.ready().then(() => sync.listTopics({ idPrefix: "\u0000" })), timeout(3_000)]);
          ok = true;
        } catch {
          ok = false;
        }
        jsProbe = { at: Date.now(), ok };
      }
      checks.jetstream = jsProbe.ok;
      checks.nats = sync.connected;
    }
    const ready = Object.values(checks).every(Boolean);
    return c.json({ status: ready ? "ready" : "not_ready", checks }, ready ? 200 : 503);
  });

  const hubFollowers = () => (options.sync ? hubRegistryOf(options.sync).followerCount : 0) + fallbackHubs.followerCount;
  const extra = () => ({
    hubFollowers: hubFollowers(),
    hubs: core.hubIds.size,
    draining: core.draining,
    jetstreamConsumers: options.sync?.stats().consumers ?? 0,
    unauthenticated: core.unauthenticated.size,
  });
  const render = () => core.metrics.render(extra());
  const unobserve = observeBridge(() => core.metrics.snapshot(extra()));
  app.get("/metrics", (c) => c.body(render(), 200, { "content-type": "text/plain; version=0.0.4" }));

  let closed = false;
  const bridge: Bridge = {
    app,
    limits,
    get connectionCount() {
      return core.connections.size;
    },
    get draining() {
      return core.draining;
    },
    metrics: render,
    async reauthorize() {
      await Promise.all([...core.connections].map((c) => c.reauthorize()));
    },
    async reauthenticate() {
      await Promise.all([...core.connections].map((c) => c.reauthenticate()));
    },
    async drain({ graceMs = 1_000 } = {}) {
      if (!core.draining) {
        core.draining = true;
        log("info", "draining", { connections: core.connections.size });
        const spread = options.drainSpreadMs ?? 2000;
        for (const c of core.connections) c.send(encode({ type: "drain", retryAfterMs: Math.round(Math.random() * spread) }));
      }
      const end = Date.now() + graceMs;
      while (core.connections.size > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
      for (const c of [...core.connections]) c.close(CloseCode.GoingAway, "server shutting down");
    },
    async close() {
      if (closed) return;
      closed = true;
      await bridge.drain({ graceMs: 0 });
      clearInterval(ticker);
      if (pollTimer) clearInterval(pollTimer);
      fallbackHubs.close();
      unobserve();
    },
  };
  return bridge;
}

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms).unref?.());
}

/** Exposes a topic with its authorization rule (sugar for an {@link ExposedTopic}). */
export function expose<P>(
  topic: ExposedTopic<P>["topic"],
  authorize: ExposedTopic<P>["authorize"],
  options: { name?: string; modes?: SubscriptionMode[] } = {},
): ExposedTopic<P> {
  return { topic, authorize, ...options };
}
