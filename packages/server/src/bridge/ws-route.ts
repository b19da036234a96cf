/**
 * @internal The WebSocket endpoint: the upgrade's checks (draining, Origin, the cap on sockets
 * waiting for `hello`) and the events of each socket, which make its Connection.
 */
import type { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { WSContext } from "hono/ws";
import { CloseCode } from "@tidemark/shared";
import { Connection } from "./connection.js";
import type { BridgeContext } from "./context.js";
import { sendDrain } from "./drain.js";
import { ContextSocket } from "./socket.js";
import { remoteAddressOf } from "./unauthenticated.js";

/**
 * The WebSocket events of one socket. A class, not an object of closures: these live as long as
 * the socket, and per-socket closures (and a kept upgrade request) add up at 10,000 sockets.
 */
class SocketEvents<P> {
  readonly #context: BridgeContext<P>;
  #request: Request | undefined;
  #cookieToken: string | undefined;
  readonly #address: string | undefined;
  #connection: Connection<P> | undefined;

  constructor(context: BridgeContext<P>, request: Request, cookieToken: string | undefined, address: string | undefined) {
    this.#context = context;
    this.#request = request;
    this.#cookieToken = cookieToken;
    this.#address = address;
  }

  onOpen(_event: Event, ws: WSContext): void {
    const context = this.#context;
    // The upgrade checked the caps; upgrades that raced past that check are closed here.
    if (!context.unauthenticated.add(this.#address)) {
      this.#request = undefined;
      context.metrics.bump(context.metrics.rejected, "unauthenticated_connections");
      ws.close(CloseCode.TryAgainLater, "too many connections waiting for hello");
      return;
    }
    const connection = new Connection<P>(context, new ContextSocket(ws), this.#request!, this.#cookieToken, { address: this.#address });
    this.#connection = connection;
    this.#request = undefined;
    this.#cookieToken = undefined;
    context.connections.add(connection);
    context.metrics.connections++;
    if (context.draining) {
      sendDrain(context, connection);
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

/** Adds the WebSocket endpoint (`options.path`) to `app`. */
export function addWebSocketRoute<P>(app: Hono, context: BridgeContext<P>): void {
  const { options, metrics } = context;
  const upgrade = options.upgradeWebSocket((c) => new SocketEvents(context, c.req.raw, getCookie(c, options.cookieName), remoteAddressOf(c.env)));

  app.get(options.path, async (c, next) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return c.text("WebSocket upgrade required", 426);
    if (context.draining) {
      metrics.bump(metrics.rejected, "draining");
      return c.text("draining", 503);
    }
    if (!options.originAllowed(c.req.raw)) {
      metrics.bump(metrics.rejected, "origin");
      context.log("warn", "origin refused", { origin: c.req.header("origin") ?? null, host: c.req.header("host") ?? null });
      return c.text("origin not allowed", 403);
    }
    if (!context.unauthenticated.admits(remoteAddressOf(c.env))) {
      metrics.bump(metrics.rejected, "unauthenticated_connections");
      context.warnOnce("unauthenticated_connections", "too many sockets waiting for hello: upgrades refused (maxUnauthenticated, maxUnauthenticatedPerAddress)");
      return c.text("too many connections waiting for hello", 503);
    }
    return upgrade(c, next);
  });
}
