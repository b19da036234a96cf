/**
 * The Node entry of the bridge: `@hono/node-server` with a `ws` WebSocketServer.
 *
 * @example
 * const bridge = createNodeBridge({ topics, authenticate, sync });
 * const server = await serveBridge(bridge, { port: 8080 });
 * process.on("SIGTERM", () => server.close());
 */
import { serve, upgradeWebSocket, type ServerType } from "@hono/node-server";
import type { Hono } from "hono";
import { WebSocketServer } from "ws";
import type { AddressInfo } from "node:net";
import { createBridge, type Bridge } from "./bridge.js";
import type { BridgeOptions } from "./options.js";

/** `createBridge()` with the Node WebSocket upgrade. */
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
  const { server, port } = await new Promise<{ server: ServerType; port: number }>((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 8080, hostname, websocket: { server: wss } }, (info: AddressInfo) =>
      resolve({ server, port: info.port }),
    );
    server.once("error", reject);
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
