/**
 * @internal The WebSocket endpoint: the upgrade's checks (draining, Origin, the cap on sockets
 * waiting for `hello`) and the events of each socket, which make its Connection.
 */
import type { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { WSContext, WSEvents } from "hono/ws";
import { CloseCode, ErrorCode, LimitName, PROTOCOL_NAME } from "@tidemark/shared";
import { Connection } from "./connection.js";
import type { BridgeContext } from "./context.js";
import { sendDrain } from "./drain.js";
import { encode } from "./frames.js";
import { ContextSocket } from "./socket.js";
import { remoteAddressOf, type ShedReason, type WaitingPlace, type WaitingSocket } from "./unauthenticated.js";
import { headerOf } from "./lazy-request.js";

/**
 * The WebSocket events of one socket. A class, not an object of closures: these live as long as
 * the socket, and per-socket closures (and a kept upgrade request) add up at 10,000 sockets.
 */
class SocketEvents<P> implements WaitingSocket {
  readonly #context: BridgeContext<P>;
  #request: Request | undefined;
  #cookieToken: string | undefined;
  readonly #address: string | undefined;
  #connection: Connection<P> | undefined;
  /** Its place among the sockets waiting for `hello`, until its first frame. */
  #place: WaitingPlace | undefined;

  constructor(context: BridgeContext<P>, request: Request, cookieToken: string | undefined, address: string | undefined) {
    this.#context = context;
    this.#request = request;
    this.#cookieToken = cookieToken;
    this.#address = address;
  }

  onOpen(_event: Event, ws: WSContext): void {
    const context = this.#context;
    // The upgrade checked the caps; upgrades that raced past that check are closed here. A full
    // process cap makes room by shedding a silent socket (shed() below), before the Connection
    // exists: the one shed is never this one.
    const place = context.unauthenticated.add(this.#address, this);
    if (!place) {
      this.#request = undefined;
      context.metrics.bump(context.metrics.rejected, "unauthenticated_connections");
      ws.send(comebackFrame(context, this.#address));
      ws.close(CloseCode.TryAgainLater, BUSY);
      return;
    }
    const connection = new Connection<P>(context, new ContextSocket(ws), this.#request!, this.#cookieToken, place);
    this.#connection = connection;
    this.#place = place;
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
    if (this.#place) {
      // A first frame is a hello (anything else closes the connection): it may take a while to
      // authenticate, and is not shed meanwhile.
      this.#context.unauthenticated.spoke(this.#place);
      this.#place = undefined;
    }
    this.#connection?.onMessage(event.data);
  }

  /** Called by the count when this silent socket loses its place (its place is already freed). */
  shed(why: ShedReason): void {
    const connection = this.#connection;
    this.#place = undefined;
    if (!connection) return;
    const { metrics } = this.#context;
    if (why === "evicted") {
      metrics.bump(metrics.rejected, "unauthenticated_evicted");
      this.#context.warnOnce("unauthenticated_evicted", "maxUnauthenticated is full: silent sockets are closed (1013) to make room for new ones");
      connection.send(comebackFrame(this.#context, this.#address));
      connection.close(CloseCode.TryAgainLater, "evicted: too many connections waiting for hello");
      return;
    }
    // The same answer as the plain hello deadline (session.ts), reached sooner under pressure.
    metrics.bump(metrics.rejected, "unauthenticated_time");
    connection.send(encode({ type: "error", code: ErrorCode.Unauthorized, message: "no valid hello in time (the server is busy)", limit: LimitName.UnauthenticatedTime }));
    connection.close(CloseCode.Timeout, "no valid hello in time");
  }

  onClose(): void {
    this.#connection?.onClose();
  }

  onError(): void {
    this.#connection?.onClose();
  }
}

/**
 * The events of a socket accepted only to be closed with a code and reason a browser can see
 * (an HTTP refusal of the upgrade reaches a page as close 1006, without its status). Nothing
 * the peer sends is read.
 */
class ClosingSocket {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {}

  onOpen(_event: Event, ws: WSContext): void {
    ws.close(this.code, this.reason);
  }
}

/** Holds nothing per socket: one for every socket refused for its Origin. */
const ORIGIN_REFUSED = new ClosingSocket(CloseCode.OriginRefused, "origin not allowed");

const BUSY = "too many connections waiting for hello";

/** The `drain` frame that tells a socket refused (or shed) by the waiting-socket caps when to come back. */
function comebackFrame<P>(context: BridgeContext<P>, address: string | undefined): string {
  return encode({ type: "drain", retryAfterMs: context.unauthenticated.comebackMs(address) });
}

/**
 * The events of a socket accepted only to be refused by the caps on sockets waiting for
 * `hello`, in a way a browser can read (an HTTP 503 reaches a page as close 1006, without its
 * `Retry-After`): one `drain {retryAfterMs}` frame, then close 1013. Counted while open, so
 * that refusals cannot hold more sockets than the cap itself (past that: 503).
 */
class RefusingSocket<P> {
  #open = false;

  constructor(
    readonly context: BridgeContext<P>,
    readonly retryAfterMs: number,
  ) {}

  onOpen(_event: Event, ws: WSContext): void {
    this.#open = true;
    this.context.unauthenticated.refusingOpened();
    ws.send(encode({ type: "drain", retryAfterMs: this.retryAfterMs }));
    ws.close(CloseCode.TryAgainLater, BUSY);
  }

  onClose(): void {
    if (!this.#open) return;
    this.#open = false;
    this.context.unauthenticated.refusingClosed();
  }
}

/** True when the upgrade offers the Tidemark subprotocol: a client that reads close codes. */
function offersProtocol(request: Request): boolean {
  const offered = headerOf(request, "sec-websocket-protocol");
  return offered !== null && offered.split(",").some((p) => p.trim() === PROTOCOL_NAME);
}

/** An upgrade refused: the status and the text of the response. */
export interface Refusal {
  status: 426 | 403 | 503;
  text: string;
  /** The `Retry-After` header (seconds), when the refusal says when to come back. */
  retryAfterSeconds?: number;
}

/** Where a bridge keeps its {@link WsRoute} (bridge.ts; read by node/serve.ts). */
export const WS_ROUTE = Symbol("tidemark.wsRoute");

/** The endpoint for a runtime entry that upgrades without running the app (node/upgrade.ts). */
export interface WsRoute {
  /** `options.path`, as the app routes it. */
  readonly path: string;
  /** `options.cookieName`: the cookie read when `hello` has no token. */
  readonly cookieName: string;
  /** Checks an upgrade of `request` (a websocket upgrade) and gives its socket's events, or why not. */
  open(request: Request, address: string | undefined, cookieToken: string | undefined): WSEvents | Refusal;
}

/**
 * The checks of an upgrade, in order: draining, Origin, sockets waiting for `hello`. A refused
 * Origin is final for the client, so a Tidemark client is told in a way it can read: the
 * upgrade is accepted and closed with 4403 (still only within the cap on waiting sockets). So
 * is a full cap on waiting sockets, with when to come back (RefusingSocket), while the sockets
 * so refused are fewer than the cap; other clients, and the rest, get a 503 with `Retry-After`.
 */
function refusal<P>(context: BridgeContext<P>, request: Request, address: string | undefined): Refusal | ClosingSocket | RefusingSocket<P> | undefined {
  const { options, metrics } = context;
  if (context.draining) {
    metrics.bump(metrics.rejected, "draining");
    return { status: 503, text: "draining" };
  }
  const originAllowed = options.originAllowed(request);
  if (!originAllowed) {
    metrics.bump(metrics.rejected, "origin");
    context.log("warn", "origin refused", { origin: headerOf(request, "origin"), host: headerOf(request, "host") });
    if (!offersProtocol(request)) return { status: 403, text: "origin not allowed" };
  }
  if (!context.unauthenticated.admits(address)) {
    if (originAllowed) metrics.bump(metrics.rejected, "unauthenticated_connections");
    context.warnOnce("unauthenticated_connections", "too many sockets waiting for hello: upgrades refused (maxUnauthenticated, maxUnauthenticatedPerAddress)");
    const retryAfterMs = context.unauthenticated.comebackMs(address);
    if (originAllowed && offersProtocol(request) && context.unauthenticated.refusingRoom) return new RefusingSocket(context, retryAfterMs);
    return { status: 503, text: BUSY, retryAfterSeconds: Math.ceil(retryAfterMs / 1000) };
  }
  return originAllowed ? undefined : ORIGIN_REFUSED;
}

/** Adds the WebSocket endpoint (`options.path`) to `app`; returns it for runtime entries. */
export function addWebSocketRoute<P>(app: Hono, context: BridgeContext<P>): WsRoute {
  const { options } = context;
  const upgrade = options.upgradeWebSocket((c) => new SocketEvents(context, c.req.raw, getCookie(c, options.cookieName), remoteAddressOf(c.env)));
  const refuseOrigin = options.upgradeWebSocket(() => ORIGIN_REFUSED);

  app.get(options.path, async (c, next) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return c.text("WebSocket upgrade required", 426);
    const refused = refusal(context, c.req.raw, remoteAddressOf(c.env));
    if (refused instanceof ClosingSocket) return refuseOrigin(c, next);
    if (refused instanceof RefusingSocket) return options.upgradeWebSocket(() => refused)(c, next);
    if (refused) return c.text(refused.text, refused.status, refused.retryAfterSeconds === undefined ? undefined : { "Retry-After": String(refused.retryAfterSeconds) });
    return upgrade(c, next);
  });

  return {
    path: options.path,
    cookieName: options.cookieName,
    open(request, address, cookieToken) {
      return refusal(context, request, address) ?? new SocketEvents(context, request, cookieToken, address);
    },
  };
}
