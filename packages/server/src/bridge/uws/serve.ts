/**
 * Serves a bridge on uWebSockets.js, a native WebSocket and HTTP server, instead of Node's
 * `http` and `ws`. Sockets, frames and buffers live in C++: an idle connection costs about half
 * the CPU and memory it costs on `ws` (docs/benchmarks/heartbeat.md). Tidemark does not ship a
 * build; the operator installs one for their Node and passes the module in (docs/bridge.md).
 *
 * @example
 * import uws from "uWebSockets.js";
 * const bridge = createNodeBridge({ topics, authenticate, sync });
 * const server = await serveBridgeUws(bridge, { uws, port: 8080 });
 */
import { InvalidArgumentError } from "@tidemark/shared";
import type { Hono } from "hono";
import type { WSEvents } from "hono/ws";
import type { Bridge } from "../bridge.js";
import { directUpgrade, type DirectUpgrade } from "../node/upgrade.js";
import { upgradeEnv } from "../node/ws.js";
import { WS_ROUTE, type WsRoute } from "../ws-route.js";
import { readBody, requestHead, toRequest, writeRefusal, writeResponse, type UwsRequestHead } from "./http.js";
import { onUwsClose, onUwsMessage, onUwsOpen, type UwsSocketData } from "./socket.js";
import type { UwsListenSocket, UwsModule, UwsRequest, UwsResponse, UwsWebSocket } from "./types.js";

export type { UwsModule, UwsWebSocket } from "./types.js";

export interface ServeBridgeUwsOptions {
  /** The uWebSockets.js module (v20 API), as imported; it must be a native build. */
  uws: UwsModule;
  /** @default 8080; 0 picks a free port */
  port?: number;
  /** @default "127.0.0.1" */
  hostname?: string;
  /** Serve this app (one that mounts `bridge.app`) instead of the bridge's own. */
  app?: Hono;
  /** Time clients get to leave after `drain` before their sockets are closed. @default 1000 */
  drainGraceMs?: number;
  /** Largest HTTP request body the app is given (bigger ones get 413). @default 1 MiB */
  maxBodyBytes?: number;
}

/** A bridge listening on uWS. */
export interface UwsBridgeServer {
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
  /** The open uWS WebSockets (for inspection, as `serveBridge`'s `webSocketServer`). */
  readonly sockets: ReadonlySet<UwsWebSocket<unknown>>;
  /** Drains the bridge, closes its sockets, then stops listening. */
  close(): Promise<void>;
}

/** True for a uWS module whose App is native code (a package's pure-JS fallback is refused). */
export function isNativeUws(uws: UwsModule): boolean {
  return typeof uws?.App === "function" && /\[native code\]/.test(Function.prototype.toString.call(uws.App));
}

/** Serves a bridge (or an app that mounts it) on uWebSockets.js. */
export async function serveBridgeUws(bridge: Bridge, options: ServeBridgeUwsOptions): Promise<UwsBridgeServer> {
  const { uws } = options;
  if (!isNativeUws(uws)) {
    throw new InvalidArgumentError(
      "serveBridgeUws needs a native uWebSockets.js build for this Node (its App is not native code: the package fell back to JavaScript, or this is not uWS); use serveBridge instead",
    );
  }
  const hostname = options.hostname ?? "127.0.0.1";
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const app = options.app ?? bridge.app;
  const route = app === bridge.app ? (bridge as { [WS_ROUTE]?: WsRoute })[WS_ROUTE] : undefined;
  const direct: DirectUpgrade | undefined = route && directUpgrade(route);
  const { maxFrameBytes, maxBufferedBytes } = bridge.limits;
  const open = new Set<UwsWebSocket<UwsSocketData>>();

  /**
   * An upgrade the app answers (a mounted bridge, or one the direct path does not recognise), as
   * serveBridge does: the app sees it as a GET, and an upgrade it accepts is then checked as
   * `ws` checks it (405 for another method, 400 without a WebSocket key).
   */
  const upgradeThroughApp = (res: UwsResponse, head: UwsRequestHead, context: unknown) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const upgrade = upgradeEnv({ socket: { remoteAddress: head.remoteAddress } });
    void (async () => {
      let response: Response;
      try {
        response = await app.fetch(toRequest({ ...head, method: "GET" }), upgrade.env);
      } catch {
        if (!aborted) writeRefusal(res, 500);
        return;
      }
      if (aborted) return;
      const events = upgrade.events();
      if (!events) return writeRefusal(res, response.status === 200 ? 400 : response.status, response.headers.get("retry-after"));
      if (head.method !== "GET") return writeRefusal(res, 405);
      if (context === undefined || !head.headers["sec-websocket-key"]) return writeRefusal(res, 400);
      res.cork(() => accept(res, head, { events: events as WSEvents, light: false, protocol: "" }, context));
    })();
  };

  const accept = (res: UwsResponse, head: UwsRequestHead, data: UwsSocketData, context: unknown) => {
    // As `ws` does: the first subprotocol offered is the one chosen.
    data.protocol = head.headers["sec-websocket-protocol"]?.split(",")[0]?.trim() ?? "";
    res.upgrade(data, head.headers["sec-websocket-key"] ?? "", data.protocol, head.headers["sec-websocket-extensions"] ?? "", context);
  };

  const server = uws.App();
  server.ws<UwsSocketData>("/*", {
    compression: 0,
    // As serveBridge: a frame just over maxFrameBytes still reaches the bridge (its 4413 error);
    // a larger one is cut by uWS at its header.
    maxPayloadLength: maxFrameBytes * 2,
    // The bridge's heartbeat is the one timeout (uWS's would close an idle but healthy socket).
    idleTimeout: 0,
    sendPingsAutomatically: false,
    // The bridge holds events back past maxBufferedBytes and closes a socket that does not read
    // past 4x it: uWS's own bound (where it drops a message) must never come first.
    maxBackpressure: 8 * maxBufferedBytes + 4 * maxFrameBytes,
    closeOnBackpressureLimit: false,
    upgrade(res, req: UwsRequest, context) {
      const head = requestHead(res, req);
      const answer = direct?.({ url: head.target, method: head.method, headers: head.headers, socket: { remoteAddress: head.remoteAddress } });
      if (answer === undefined) return upgradeThroughApp(res, head, context);
      if ("status" in answer) return writeRefusal(res, answer.status, answer.retryAfterSeconds);
      accept(res, head, { events: answer, light: true, protocol: "" }, context);
    },
    open(ws) {
      open.add(ws);
      onUwsOpen(ws);
    },
    message: onUwsMessage,
    close(ws, code, message) {
      open.delete(ws);
      onUwsClose(ws, code, message);
    },
  });
  server.any("/*", (res, req) => {
    const head = requestHead(res, req);
    // An upgrade uWS's WebSocket route did not take (another method, no key): the app decides.
    if (head.headers.upgrade !== undefined) return upgradeThroughApp(res, head, undefined);
    let aborted = false;
    res.onAborted(() => (aborted = true));
    void (async () => {
      // uWS calls onData only for a request that announces a body.
      const hasBody = Number(head.headers["content-length"] ?? 0) > 0 || head.headers["transfer-encoding"] !== undefined;
      const body = hasBody ? await readBody(res, maxBodyBytes) : undefined;
      if (aborted) return;
      if (hasBody && body === undefined) return writeRefusal(res, 413);
      let response: Response;
      try {
        response = await app.fetch(toRequest(head, body), upgradeEnv({ socket: { remoteAddress: head.remoteAddress } }).env);
      } catch {
        if (!aborted) writeRefusal(res, 500);
        return;
      }
      await writeResponse(res, response, () => aborted);
    })();
  });

  const listenSocket = await new Promise<UwsListenSocket>((resolve, reject) => {
    server.listen(hostname, options.port ?? 8080, (token) => {
      if (token) resolve(token);
      else reject(new InvalidArgumentError(`serveBridgeUws could not listen on ${hostname}:${options.port ?? 8080}`));
    });
  });
  const port = uws.us_socket_local_port(listenSocket);
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
    sockets: open,
    close() {
      closing ??= (async () => {
        await bridge.drain({ graceMs: options.drainGraceMs ?? 1_000 });
        await bridge.close();
        uws.us_listen_socket_close(listenSocket);
        for (const ws of [...open]) ws.close();
      })();
      return closing;
    },
  };
}
