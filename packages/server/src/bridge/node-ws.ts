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
    socket.on("error", () => undefined);
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

function attach(ws: WebSocket, events: WSEvents<WebSocket>): void {
  const ctx = new WSContext<WebSocket>({
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    raw: ws,
    get readyState() {
      return ws.readyState as 0 | 1 | 2 | 3;
    },
    protocol: ws.protocol,
  });
  events.onOpen?.(new Event("open"), ctx);
  ws.on("message", (data, isBinary) => {
    const buf = data as Buffer;
    const payload = isBinary ? (buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer) : data.toString();
    events.onMessage?.(new MessageEvent("message", { data: payload }), ctx);
  });
  ws.on("close", (code, reason) => {
    events.onClose?.(Object.assign(new Event("close"), { code, reason: reason.toString(), wasClean: true }) as CloseEvent, ctx);
  });
  ws.on("error", () => events.onError?.(new Event("error"), ctx));
}
