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

const SLOT = Symbol("tidemark.upgrade");

interface Slot {
  events?: WSEvents<WebSocket>;
}

/** `upgradeWebSocket` for apps served by {@link handleUpgrades}. */
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

function refuse(socket: Duplex, status: number): void {
  if (socket.destroyed) return;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Routes the server's upgrade requests through `fetch` and accepts those the app upgraded. */
export function handleUpgrades(
  server: { on(event: "upgrade", listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown },
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  wss: WebSocketServer,
): void {
  server.on("upgrade", (req, socket, head) => {
    // A listener made in here would share this scope and keep `req` alive as long as the socket.
    socket.on("error", ignore);
    const slot: Slot = {};
    void (async () => {
      let response: Response;
      try {
        response = await fetch(requestOf(req), { incoming: req, outgoing: undefined, [SLOT]: slot });
      } catch {
        refuse(socket, 500);
        return;
      }
      const events = slot.events;
      if (!events || socket.destroyed) {
        refuse(socket, events ? 400 : response.status === 200 ? 400 : response.status);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => attach(ws, events));
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
}
type Tagged = WebSocket & { [STATE]: Attached };

/** The WSContextInit of a `ws` socket. */
class NodeSocketInit {
  readonly raw: WebSocket;
  readonly protocol: string;
  constructor(ws: WebSocket) {
    this.raw = ws;
    this.protocol = ws.protocol;
  }
  send(data: string | ArrayBuffer | Uint8Array): void {
    this.raw.send(data);
  }
  close(code?: number, reason?: string): void {
    this.raw.close(code, reason);
  }
  get readyState(): 0 | 1 | 2 | 3 {
    return this.raw.readyState as 0 | 1 | 2 | 3;
  }
}

function onWsMessage(this: Tagged, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
  const { events, ctx } = this[STATE];
  const buf = data as Buffer;
  const payload = isBinary ? (buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer) : data.toString();
  events.onMessage?.(new MessageEvent("message", { data: payload }), ctx);
}

function onWsClose(this: Tagged, code: number, reason: Buffer): void {
  const { events, ctx } = this[STATE];
  events.onClose?.(Object.assign(new Event("close"), { code, reason: reason.toString(), wasClean: true }) as CloseEvent, ctx);
}

function onWsError(this: Tagged): void {
  const { events, ctx } = this[STATE];
  events.onError?.(new Event("error"), ctx);
}

function attach(ws: WebSocket, events: WSEvents<WebSocket>): void {
  const ctx = new WSContext<WebSocket>(new NodeSocketInit(ws));
  (ws as Tagged)[STATE] = { events, ctx };
  events.onOpen?.(new Event("open"), ctx);
  ws.on("message", onWsMessage as (this: WebSocket, ...args: unknown[]) => void);
  ws.on("close", onWsClose as (this: WebSocket, ...args: unknown[]) => void);
  ws.on("error", onWsError as (this: WebSocket, ...args: unknown[]) => void);
}
