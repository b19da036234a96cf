/**
 * @internal A uWS WebSocket as Hono's `WSContext` (what the bridge's route talks to), and the
 * uWS handlers that feed it. A uWS socket must not be touched after its close handler ran (it
 * throws), so every call goes through {@link UwsSocketInit}, which knows.
 */
import { WSContext, type WSEvents } from "hono/ws";
import { CloseCode } from "@tidemark/shared";
import { SEND_FRAME, type FrameText } from "../socket.js";
import type { UwsWebSocket } from "./types.js";

/** What a socket carries from its upgrade to its close (uWS's user data). */
export interface UwsSocketData {
  events: WSEvents;
  /** The subprotocol chosen at the upgrade. */
  protocol: string;
  /** The bridge's own route (reads only `data` of a message): no DOM MessageEvent per message. */
  light: boolean;
  init?: UwsSocketInit;
}

/** The WSContextInit of a uWS socket; also its `raw`, for the bridge's `bufferedAmount`. */
export class UwsSocketInit {
  readonly raw: this;
  readonly protocol: string;
  readonly ctx: WSContext;
  #ws: UwsWebSocket<UwsSocketData> | undefined;
  constructor(ws: UwsWebSocket<UwsSocketData>, protocol: string) {
    this.#ws = ws;
    this.protocol = protocol;
    this.raw = this;
    this.ctx = new WSContext(this);
    (this.ctx as unknown as { [SEND_FRAME]: UwsSocketInit })[SEND_FRAME] = this;
  }
  send(data: string | ArrayBuffer | Uint8Array): void {
    this.#send(data, typeof data !== "string");
  }
  /** A shared frame: uWS frames it in C++, from the text's UTF-8 made once for all its sockets. */
  sendFrame(frame: FrameText): void {
    this.#send((frame.utf8 ??= Buffer.from(frame.text)), false);
  }
  #send(data: string | ArrayBuffer | Uint8Array, binary: boolean): void {
    const ws = this.#ws;
    // uWS drops a message over `maxBackpressure` (2): the bridge closes a socket that does not
    // read long before that bound (4x maxBufferedBytes), but a dropped frame would be a hole.
    if (ws && ws.send(data, binary) === 2) this.close(CloseCode.Timeout, "not reading");
  }
  close(code?: number, reason?: string): void {
    const ws = this.#ws;
    if (!ws) return;
    this.#ws = undefined;
    ws.end(code, reason);
  }
  get bufferedAmount(): number {
    return this.#ws?.getBufferedAmount() ?? 0;
  }
  get readyState(): 0 | 1 | 2 | 3 {
    return this.#ws ? 1 : 3;
  }
  /** @internal The close handler ran: the uWS socket is gone. */
  closed(): void {
    this.#ws = undefined;
  }
}

/** uWS `open`: the bridge's route gets its socket. */
export function onUwsOpen(ws: UwsWebSocket<UwsSocketData>): void {
  const data = ws.getUserData();
  const init = new UwsSocketInit(ws, data.protocol);
  data.init = init;
  data.events.onOpen?.(new Event("open"), init.ctx);
}

/** uWS `message`: the ArrayBuffer is valid only during this call, so it is copied out. */
export function onUwsMessage(ws: UwsWebSocket<UwsSocketData>, message: ArrayBuffer, isBinary: boolean): void {
  const { events, init, light } = ws.getUserData();
  if (!init) return;
  const payload = isBinary ? message.slice(0) : Buffer.from(message).toString();
  events.onMessage?.(light ? ({ data: payload } as MessageEvent) : new MessageEvent("message", { data: payload }), init.ctx);
}

/** uWS `close` (whoever closed): the socket is unusable from here on. */
export function onUwsClose(ws: UwsWebSocket<UwsSocketData>, code: number, message: ArrayBuffer): void {
  const { events, init } = ws.getUserData();
  if (!init) return;
  init.closed();
  const event = Object.assign(new Event("close"), { code, reason: Buffer.from(message).toString(), wasClean: code !== 1006 });
  events.onClose?.(event as unknown as Parameters<NonNullable<WSEvents["onClose"]>>[0], init.ctx);
}
