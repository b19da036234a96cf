/**
 * @internal A lean Node WebSocket upgrade for Hono's `upgradeWebSocket` contract. It does what
 * `@hono/node-server`'s helper does, minus one cost that matters at 10,000 sockets: that helper
 * keeps each request's Hono context (Request, IncomingMessage, env) reachable from the socket's
 * listeners for the socket's whole life. Here the app runs once on the upgrade request, the
 * events it returns are kept, and the request is dropped.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";
import { defineWebSocketHelper, WSContext, type WSEvents, type UpgradeWebSocket } from "hono/ws";
import type { WebSocket, WebSocketServer } from "ws";
import { SEND_FRAME, type FrameText } from "../socket.js";
import { wsTextMessage } from "./ws-wire.js";
import type { DirectUpgrade } from "./upgrade.js";

const SLOT = Symbol("tidemark.upgrade");

interface Slot {
  events?: WSEvents<WebSocket>;
}

/**
 * The env an upgrade request runs the app with, so that {@link upgradeWebSocket} hands the
 * events the app's route returns back to the runtime entry that upgrades (Node's here, uWS's in
 * uws/serve.ts) instead of upgrading itself. `incoming` is what `remoteAddressOf` reads.
 */
export function upgradeEnv(incoming: unknown): { env: Record<string | symbol, unknown>; events(): WSEvents<WebSocket> | undefined } {
  const slot: Slot = {};
  return { env: { incoming, outgoing: undefined, [SLOT]: slot }, events: () => slot.events };
}

/** `upgradeWebSocket` for apps served by {@link handleUpgrades} (or by `serveBridgeUws`). */
export const upgradeWebSocket: UpgradeWebSocket<WebSocket> = defineWebSocketHelper<WebSocket>(async (c, events) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return;
  const slot = (c.env as Record<symbol, Slot | undefined> | undefined)?.[SLOT];
  if (!slot) return new Response("WebSocket upgrade needs serveBridge()", { status: 500 });
  slot.events = events;
  return new Response(null, { status: 200 });
});

function requestOf(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { headers });
}

const ignore = () => undefined;

function uncork(init: { uncorked(): void }, socket: { uncork(): void }): void {
  init.uncorked();
  socket.uncork();
}

function refuse(socket: Duplex, status: number, retryAfterSeconds?: number | string | null): void {
  if (socket.destroyed) return;
  const retryAfter = retryAfterSeconds == null || !/^\d+$/.test(String(retryAfterSeconds)) ? "" : `Retry-After: ${retryAfterSeconds}\r\n`;
  // Destroyed once written: the response says Connection: close, and a peer that never hangs
  // up would otherwise hold a half-closed socket, and the server's close(), for ever.
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nConnection: close\r\n${retryAfter}Content-Length: 0\r\n\r\n`, () => socket.destroy());
}

/**
 * Routes the server's upgrade requests through `fetch` and accepts those the app upgraded;
 * `direct` (upgrade.ts) answers the bridge endpoint's own upgrades without the app.
 */
export function handleUpgrades(
  server: { on(event: "upgrade", listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown },
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  wss: WebSocketServer,
  direct?: DirectUpgrade,
): void {
  server.on("upgrade", (req, socket, head) => {
    // A listener made in here would share this scope and keep `req` alive as long as the socket.
    socket.on("error", ignore);
    const answer = direct?.(req);
    if (answer !== undefined) {
      if ("status" in answer) refuse(socket, answer.status, answer.retryAfterSeconds);
      else if (socket.destroyed) refuse(socket, 400);
      else wss.handleUpgrade(req, socket, head, (ws) => attach(ws, answer as WSEvents<WebSocket>, true));
      return;
    }
    const upgrade = upgradeEnv(req);
    void (async () => {
      let response: Response;
      try {
        response = await fetch(requestOf(req), upgrade.env);
      } catch {
        refuse(socket, 500);
        return;
      }
      const events = upgrade.events();
      if (!events || socket.destroyed) {
        refuse(socket, events ? 400 : response.status === 200 ? 400 : response.status, response.headers.get("retry-after"));
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => attach(ws, events, false));
    })();
  });
}

// Per-socket state lives in one small object reached from the socket: module-level listeners
// (EventEmitter calls them with `this` = the socket) instead of closures per socket, which
// V8 gives dictionary-mode property arrays and which add up at 10,000 sockets.
const STATE = Symbol("tidemark.ws");
interface Attached {
  events: WSEvents<WebSocket>;
  ctx: WSContext<WebSocket>;
  /**
   * The bridge's own route, which reads only `data` of a message event: it gets a plain
   * `{ data }` instead of a DOM MessageEvent (whose construction was ~2 % of an idle bridge's
   * CPU, paid at every heartbeat answer). An app's routes get the real event.
   */
  light: boolean;
}
type Tagged = WebSocket & { [STATE]: Attached };

/** What the fast path reads of a `ws` socket (ws 8: `_socket` is its net.Socket). */
interface RawSocket {
  cork(): void;
  uncork(): void;
  write(chunk: Uint8Array): boolean;
  destroyed?: boolean;
}
const rawSocket = (ws: WebSocket) => (ws as unknown as { _socket?: RawSocket })._socket;

/**
 * The WSContextInit of a `ws` socket. Sends made in one turn of the event loop are corked into
 * one write: a burst of events to a socket (a catch-up's replay) costs one syscall, not one per
 * frame.
 */
class NodeSocketInit {
  readonly raw: WebSocket;
  readonly protocol: string;
  #corked = false;
  constructor(ws: WebSocket) {
    this.raw = ws;
    this.protocol = ws.protocol;
  }
  send(data: string | ArrayBuffer | Uint8Array): void {
    this.#cork();
    this.raw.send(data);
  }
  /**
   * A shared event frame (see SEND_FRAME): its whole WebSocket message is built once and written
   * to the socket as is, past ws's per-message framing (a header buffer and two writes per send).
   * Only on an open socket without extensions: a negotiated permessage-deflate, or a closing
   * socket, goes through ws as before. ws counts the bytes in `bufferedAmount` all the same.
   * A `single` frame (a heartbeat) is written at once unless a cork is already open: corking
   * one write costs a tick callback and a writev for nothing, at every idle socket.
   */
  sendFrame(frame: FrameText, single?: boolean): void {
    const raw = this.raw;
    const socket = rawSocket(raw);
    if (raw.readyState !== 1 || raw.extensions !== "" || !socket || socket.destroyed) return this.send(frame.text);
    if (!single) this.#cork();
    socket.write((frame.wire ??= wsTextMessage(frame.text)));
  }
  #cork(): void {
    if (this.#corked) return;
    const socket = rawSocket(this.raw);
    if (!socket || socket.destroyed) return;
    this.#corked = true;
    socket.cork();
    process.nextTick(uncork, this, socket);
  }
  /** @internal */
  uncorked(): void {
    this.#corked = false;
  }
  close(code?: number, reason?: string): void {
    this.raw.close(code, reason);
  }
  get readyState(): 0 | 1 | 2 | 3 {
    return this.raw.readyState as 0 | 1 | 2 | 3;
  }
}

/** The parts of `ws`'s receiver touched below (ws 8). */
type WithReceiver = { _receiver?: { _mask?: unknown } };

function onWsMessage(this: Tagged, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
  const { events, ctx, light } = this[STATE];
  // ws keeps the last frame's 4-byte mask until the next frame, as a view that holds the whole
  // chunk it was read in (~300 bytes per idle socket once its client sent hello and subscribe);
  // the frame is unmasked by now, and the next frame reads its own mask.
  const receiver = (this as WithReceiver)._receiver;
  if (receiver) receiver._mask = undefined;
  const buf = data as Buffer;
  const payload = isBinary ? (buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer) : data.toString();
  events.onMessage?.(light ? ({ data: payload } as MessageEvent) : new MessageEvent("message", { data: payload }), ctx);
}

function onWsClose(this: Tagged, code: number, reason: Buffer): void {
  const { events, ctx } = this[STATE];
  events.onClose?.(Object.assign(new Event("close"), { code, reason: reason.toString(), wasClean: true }) as CloseOf<WSEvents>, ctx);
}

/** The close event hono's handlers take (server code has no DOM `CloseEvent`). */
type CloseOf<E extends WSEvents> = Parameters<NonNullable<E["onClose"]>>[0];

function onWsError(this: Tagged): void {
  const { events, ctx } = this[STATE];
  events.onError?.(new Event("error"), ctx);
}

function attach(ws: WebSocket, events: WSEvents<WebSocket>, light: boolean): void {
  const init = new NodeSocketInit(ws);
  const ctx = new WSContext<WebSocket>(init);
  (ctx as unknown as { [SEND_FRAME]: NodeSocketInit })[SEND_FRAME] = init;
  (ws as Tagged)[STATE] = { events, ctx, light };
  events.onOpen?.(new Event("open"), ctx);
  ws.on("message", onWsMessage as (this: WebSocket, ...args: unknown[]) => void);
  ws.on("close", onWsClose as (this: WebSocket, ...args: unknown[]) => void);
  ws.on("error", onWsError as (this: WebSocket, ...args: unknown[]) => void);
}
