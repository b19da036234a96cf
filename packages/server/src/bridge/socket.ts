/**
 * @internal The runtime-neutral socket the bridge writes to, and its implementation over Hono's
 * `WSContext` (one small object per socket, no closures).
 */
import type { WSContext } from "hono/ws";

/**
 * An optional fast path a runtime adapter may put on its WSContext (the Node entry does): send a
 * shared event frame as prebuilt wire bytes, so a frame shared by many sockets is encoded and
 * framed once instead of once per socket. The adapter caches its bytes on the frame (`wire`).
 */
export const SEND_FRAME = Symbol.for("tidemark.sendFrame");
export interface FrameSender {
  /** `single`: the frame goes out on its own (a heartbeat), written at once rather than corked. */
  sendFrame(frame: FrameText, single?: boolean): void;
}

/** A serialised frame; `wire` (the whole WebSocket message) is filled by a runtime that uses it. */
export interface FrameText {
  text: string;
  wire?: Uint8Array;
  /** The text as UTF-8, for a runtime that frames it itself (uWS). */
  utf8?: Uint8Array;
}

/** The runtime-neutral view of a WebSocket the bridge writes to. */
export interface BridgeSocket {
  send(data: string): void;
  /**
   * Sends a shared frame (text or, where the runtime allows, its cached wire bytes). `single`
   * says nothing else is likely to follow in this turn (a heartbeat): no write coalescing.
   */
  sendFrame(frame: FrameText, single?: boolean): void;
  close(code: number, reason: string): void;
  /** Bytes queued for sending; 0 when the runtime does not tell. */
  readonly bufferedAmount: number;
}

/** The bridge's view of a Hono WSContext (a class: no per-socket closures). */
export class ContextSocket implements BridgeSocket {
  readonly #ws: WSContext;
  constructor(ws: WSContext) {
    this.#ws = ws;
  }
  send(data: string): void {
    this.#ws.send(data);
  }
  sendFrame(frame: FrameText, single?: boolean): void {
    const fast = (this.#ws as unknown as { [SEND_FRAME]?: FrameSender })[SEND_FRAME];
    if (fast) fast.sendFrame(frame, single);
    else this.#ws.send(frame.text);
  }
  close(code: number, reason: string): void {
    this.#ws.close(code, reason);
  }
  get bufferedAmount(): number {
    // `ws`, browsers, Deno: bufferedAmount; Bun: getBufferedAmount()
    const raw = this.#ws.raw as { bufferedAmount?: number; getBufferedAmount?: () => number } | undefined;
    if (!raw) return 0;
    // Read once: on `ws` it is a getter (the socket's write queue plus the sender's), asked for
    // every socket of a hub at every event.
    const amount = raw.bufferedAmount;
    return typeof amount === "number" ? amount : (raw.getBufferedAmount?.() ?? 0);
  }
}
