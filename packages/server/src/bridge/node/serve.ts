/**
 * The Node entry of the bridge: `@hono/node-server` with a `ws` WebSocketServer.
 *
 * @example
 * const bridge = createNodeBridge({ topics, authenticate, sync });
 * const server = await serveBridge(bridge, { port: 8080 });
 * process.on("SIGTERM", () => server.close());
 */
import { createAdaptorServer, type ServerType } from "@hono/node-server";
import type { Hono } from "hono";
import { WebSocketServer, type ServerOptions } from "ws";
import type { AddressInfo } from "node:net";
import type { Server as HttpServer } from "node:http";
import { createBridge, type Bridge } from "../bridge.js";
import { handleUpgrades, upgradeWebSocket } from "./ws.js";
import { pino } from "pino";
import { bridgeLog } from "../log.js";
import type { BridgeOptions } from "../options.js";
import { directUpgrade } from "./upgrade.js";
import { WS_ROUTE, type WsRoute } from "../ws-route.js";

/**
 * `createBridge()` with the Node WebSocket upgrade (served by {@link serveBridge}). With
 * NODE_ENV=production and no `origins`, it warns: the default accepts browsers only on a
 * loopback Host (development).
 */
export function createNodeBridge<P = unknown>(options: Omit<BridgeOptions<P>, "upgradeWebSocket">): Bridge {
  const logger = options.logger ?? pino({ level: options.logLevel ?? "info" });
  const bridge = createBridge<P>({ ...options, logger, upgradeWebSocket });
  if (options.origins === undefined && process.env.NODE_ENV === "production") {
    bridgeLog(logger, options.logLevel)(
      "warn",
      "no origins option in production: browsers are refused unless the Host is a loopback name; set origins to your app's origins",
    );
  }
  return bridge;
}

export interface ServeBridgeOptions {
  /** @default 8080; 0 picks a free port */
  port?: number;
  /** @default "127.0.0.1" */
  hostname?: string;
  /** Serve this app (one that mounts `bridge.app`) instead of the bridge's own. */
  app?: Hono;
  /** Time clients get to leave after `drain` before their sockets are closed. @default 1000 */
  drainGraceMs?: number;
  /**
   * Listen backlog: connections the kernel completes and queues until the bridge accepts them.
   * A reconnect storm opens thousands at once while the bridge is busy catching the first ones
   * up; past the queue the kernel drops the handshake and the client retries after 1, 3, 7 s...
   * Linux caps it at `net.core.somaxconn` (4096 since 5.4): raise that sysctl to use more
   * (see docs/deployment.md). @default 65535
   */
  backlog?: number;
  /**
   * Time a closing socket gets to answer the WebSocket close handshake before it is destroyed
   * (`ws`'s own 30 s would keep a refused or timed-out socket and its buffers that long); in
   * `close()`, also the time HTTP connections still open after the WebSockets get before they
   * are cut (Node's own close waits for them for ever).
   * @default 1000
   */
  closeTimeoutMs?: number;
  /**
   * Time a client gets to send a complete request head (an upgrade included). Node's 60 s lets
   * slowloris sockets that never finish the upgrade hold a file descriptor for a minute.
   * @default 10000
   */
  headersTimeoutMs?: number;
}

/** A listening bridge server. */
export interface BridgeServer {
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
  readonly server: ServerType;
  /** The `ws` server holding the sockets (for inspection). */
  readonly webSocketServer: WebSocketServer;
  /** Drains the bridge, then stops listening. */
  close(): Promise<void>;
}

/** Serves a bridge (or an app that mounts it) on Node. */
export async function serveBridge(bridge: Bridge, options: ServeBridgeOptions = {}): Promise<BridgeServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const closeTimeoutMs = options.closeTimeoutMs ?? 1_000;
  // ws buffers a message up to maxPayload before the bridge sees it, and checks the announced
  // length at the frame header: at twice maxFrameBytes a frame just over the limit still gets
  // the bridge's error frame (4413), and a larger one is cut at its header (1009) instead of
  // pinning up to a megabyte per socket before anyone authenticated.
  // `closeTimeout` (ws 8.20) is not in @types/ws yet.
  const wsOptions: ServerOptions & { closeTimeout: number } = {
    noServer: true,
    // (ws's default too) compression would give every socket a zlib context and compress each
    // shared event frame once per socket
    perMessageDeflate: false,
    maxPayload: bridge.limits.maxFrameBytes * 2,
    closeTimeout: closeTimeoutMs,
  };
  const wss = new WebSocketServer(wsOptions);
  const app = options.app ?? bridge.app;
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  // An HTTP/1 server: no `createServer` option is passed.
  const server = createAdaptorServer({
    fetch: app.fetch,
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check at
    // a fraction of the timeout so a half-sent upgrade is dropped close to it.
    serverOptions: { headersTimeout, requestTimeout: Math.max(headersTimeout, 300_000), connectionsCheckingInterval: Math.max(250, Math.min(headersTimeout / 4, 5_000)) },
  }) as HttpServer;
  // The bridge's own app: its endpoint's upgrades skip the app (upgrade.ts). An app that
  // mounts the bridge runs for every upgrade, with whatever middleware it has.
  const route = app === bridge.app ? (bridge as { [WS_ROUTE]?: WsRoute })[WS_ROUTE] : undefined;
  handleUpgrades(server, app.fetch, wss, route && directUpgrade(route));
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port ?? 8080, host: hostname, backlog: options.backlog ?? 65_535 }, () =>
      resolve((server.address() as AddressInfo).port),
    );
  });
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
    server,
    webSocketServer: wss,
    close() {
      closing ??= (async () => {
        await bridge.drain({ graceMs: options.drainGraceMs ?? 1_000 });
        await bridge.close();
        for (const client of wss.clients) client.terminate();
        // Node's close() waits for every connection, and no longer enforces the request
        // timeouts meanwhile: one peer keeping a connection open (a request head never
        // finished, a keep-alive one mid-request) held the stop for ever. What is still open
        // a close timeout later is cut.
        await new Promise<void>((resolve) => {
          const cut = setTimeout(() => server.closeAllConnections(), closeTimeoutMs);
          server.close(() => {
            clearTimeout(cut);
            resolve();
          });
        });
      })();
      return closing;
    },
  };
}
