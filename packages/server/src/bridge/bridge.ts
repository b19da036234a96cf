/**
 * `createBridge()`: a Hono app that exposes hub and live subscriptions of chosen topics over
 * WebSockets, plus `/healthz`, `/readyz` and `/metrics`. Runtime-neutral: it takes the
 * runtime's `upgradeWebSocket` (Hono's contract); `node/serve.ts` is the Node entry. This file wires
 * the parts: resolved options (options.ts), the shared BridgeContext (context.ts), the
 * WebSocket route (ws-route.ts), the operations routes (routes.ts), the ticker (ticker.ts) and
 * the drain (drain.ts).
 */
import { Hono } from "hono";
import { InvalidArgumentError, type SubscriptionMode } from "@tidemark/shared";
import type { BatchHub } from "../hub/contract.js";
import type { Topic } from "../core/types.js";
import { hubRegistryOf } from "../hub/feature.js";
import { BackpressurePoller } from "./backpressure.js";
import type { BridgeContext } from "./context.js";
import { drain } from "./drain.js";
import { EventFrames } from "./frames.js";
import { processMemory } from "./memory.js";
import { HubIds } from "./hub-ids.js";
import { BridgeMetrics } from "./metrics.js";
import { resolveOptions, type BridgeLimits, type BridgeOptions, type ExposedTopic } from "./options.js";
import { PrincipalCounts } from "./principal-counts.js";
import { addOperationsRoutes } from "./routes.js";
import type { HubSource } from "./types.js";
import { startTicker } from "./ticker.js";
import { UnauthenticatedCount } from "./unauthenticated.js";
import { StallClock } from "./stall.js";
import { addWebSocketRoute, WS_ROUTE } from "./ws-route.js";
import type { HubStats } from "../hub/stats.js";

/** The hub registry's catch-up counts, as `/metrics` reports them. */
function catchUps(stats: HubStats) {
  return { covered: stats.covered, coverReads: stats.coverReads, coverSeconds: stats.coverMs / 1000, fallbacks: stats.fallbacks, subscriberReplays: stats.subscriberReplays };
}

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
  /** Drains (grace 0) and stops timers. */
  close(): Promise<void>;
}

/**
 * Creates a bridge.
 *
 * @example
 * import { upgradeWebSocket } from "@hono/node-server";
 * const bridge = createBridge({
 *   topics: [{ topic: notifications(), authorize: (user, { tenantId }) => tenantId !== undefined && tenantId === user.id }],
 *   authenticate: (token) => verify(token),
 *   upgradeWebSocket,
 *   sync,
 * });
 */
export function createBridge<P = unknown>(bridgeOptions: BridgeOptions<P>): Bridge {
  const options = resolveOptions(bridgeOptions);
  const { limits, log } = options;
  const hubOf: HubSource = (topic, tenantId) => {
    // Read through the hub contract, whatever class the hub is; a hub without it (only the
    // public Hub interface: no batches, no progress for caught_up) cannot serve the protocol.
    const hub: Partial<BatchHub<unknown>> = topic.hub({ tenantId });
    if (typeof hub.subscribeBatches !== "function") {
      throw new InvalidArgumentError(`topic ${topic.id}: its hub() does not keep the hub contract (subscribeBatches): expose a topic made by createSync()`);
    }
    return hub as BatchHub<unknown>;
  };
  const warned = new Set<string>();
  const frames = new EventFrames();
  const metrics = new BridgeMetrics(options.meters);
  const hubIds = new HubIds();
  const clock = new StallClock();
  const context: BridgeContext<P> = {
    options,
    metrics,
    frames,
    hubIds,
    hubOf,
    principals: new PrincipalCounts(limits.maxConnectionsPerPrincipal),
    unauthenticated: new UnauthenticatedCount(limits, () => clock.now()),
    connections: new Set(),
    backpressure: new BackpressurePoller(),
    log,
    clock,
    warnOnce(key, msg) {
      if (warned.has(key)) return;
      warned.add(key);
      log("warn", msg);
    },
    draining: false,
  };

  const stopTicker = startTicker(context);
  const warmMs = bridgeOptions.warmHubsMs ?? 0;
  if (options.sync && warmMs > 0) {
    const hubs = hubRegistryOf(options.sync);
    for (const exposed of options.topics.values()) {
      const started = Date.now();
      hubs.warm(exposed.topic as Topic<unknown>, { holdMs: warmMs }).then(
        () => log("info", "hub feed warmed", { topic: exposed.topic.id, ms: Date.now() - started }),
        (err: unknown) => log("warn", "hub feed not warmed", { topic: exposed.topic.id, error: (err as Error).message }),
      );
    }
  }
  const sync = options.sync;
  const extra = () => ({
    hubFollowers: sync ? hubRegistryOf(sync).followerCount : 0,
    hubFeeds: sync ? hubRegistryOf(sync).feedCount : 0,
    hubs: context.hubIds.size,
    draining: context.draining,
    jetstreamConsumers: sync?.stats().consumers ?? 0,
    unauthenticated: context.unauthenticated.size,
    loopStalledSeconds: clock.stalledMs / 1000,
    hubCatchUps: sync ? catchUps(hubRegistryOf(sync).stats) : undefined,
  });
  const render = () => context.metrics.render({ ...extra(), memory: processMemory() });
  // The same figures as OpenTelemetry observable instruments (no-op without an SDK).
  const unobserve = options.meters.observeBridge(() => context.metrics.snapshot(extra()));
  const app = new Hono();
  const wsRoute = addWebSocketRoute(app, context);
  addOperationsRoutes(app, context, render);

  let closed = false;
  const bridge: Bridge = {
    app,
    limits,
    get connectionCount() {
      return context.connections.size;
    },
    get draining() {
      return context.draining;
    },
    metrics: render,
    async reauthorize() {
      await Promise.all([...context.connections].map((c) => c.reauthorize()));
    },
    async reauthenticate() {
      await Promise.all([...context.connections].map((c) => c.reauthenticate()));
    },
    drain: ({ graceMs = 1_000 } = {}) => drain(context, graceMs),
    async close() {
      if (closed) return;
      closed = true;
      await drain(context, 0);
      stopTicker();
      context.backpressure.stop();
      unobserve();
    },
  };
  // For serveBridge's upgrade path (node/serve.ts), off the public type.
  Object.defineProperty(bridge, WS_ROUTE, { value: wsRoute });
  return bridge;
}

/** Exposes a topic with its authorization rule (sugar for an {@link ExposedTopic}). */
export function expose<P>(
  topic: ExposedTopic<P>["topic"],
  authorize: ExposedTopic<P>["authorize"],
  options: { name?: string; modes?: SubscriptionMode[] } = {},
): ExposedTopic<P> {
  return { topic, authorize, ...options };
}
