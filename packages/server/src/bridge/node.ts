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
import { WebSocketServer } from "ws";
import type { AddressInfo } from "node:net";
import { createBridge, type Bridge } from "./bridge.js";
import { handleUpgrades, upgradeWebSocket } from "./node-ws.js";
import type { BridgeOptions } from "./options.js";

/** `createBridge()` with the Node WebSocket upgrade (served by {@link serveBridge}). */
export function createNodeBridge<P = unknown>(options: Omit<BridgeOptions<P>, "upgradeWebSocket">): Bridge {
  return createBridge<P>({ ...options, upgradeWebSocket });
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
  /** Listen backlog: reconnect storms open thousands of sockets at once. @default 4096 (the kernel may cap it) */
  backlog?: number;
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
  // ws's own cap closes the socket with 1009 and no explanation; keep it well above the
  // bridge's limit, which answers with an error frame, so it only stops absurd frames.
  const wss = new WebSocketServer({ noServer: true, maxPayload: Math.max(1024 * 1024, bridge.limits.maxFrameBytes * 4) });
  const app = options.app ?? bridge.app;
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const server = createAdaptorServer({
    fetch: app.fetch,
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check at
    // a fraction of the timeout so a half-sent upgrade is dropped close to it.
    serverOptions: { headersTimeout, requestTimeout: Math.max(headersTimeout, 300_000), connectionsCheckingInterval: Math.max(250, Math.min(headersTimeout / 4, 5_000)) },
  });
  handleUpgrades(server as import("node:http").Server, app.fetch, wss);
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    (server as import("node:http").Server).listen({ port: options.port ?? 8080, host: hostname, backlog: options.backlog ?? 4096 }, () =>
      resolve(((server as import("node:http").Server).address() as AddressInfo).port),
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
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}
