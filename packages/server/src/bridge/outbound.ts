/**
 * @internal The sending half of a connection: replies, shared event frames, and backpressure
 * (pause above `maxBufferedBytes`, resume below half of it). The protocol lives in Connection.
 */
import { CloseCode, ErrorCode, isTidemarkError, type LimitName } from "@tidemark/shared";
import { encode, type ProtocolError } from "./frames.js";
import type { BridgeCore, BridgeSocket, FrameText } from "./core.js";

export type State = "new" | "open" | "expired" | "closed";

let nextConnection = 0;
const processTag = Math.random().toString(36).slice(2, 8);

export abstract class Outbound<P> {
  readonly id = `c${processTag}${(nextConnection++).toString(36)}`;
  readonly core: BridgeCore<P>;
  state: State = "new";
  protected readonly socket: BridgeSocket;
  #paused: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(core: BridgeCore<P>, socket: BridgeSocket) {
    this.core = core;
    this.socket = socket;
  }

  abstract close(code: number, reason: string): void;

  send(text: string): void {
    if (this.state === "closed") return;
    // Replies (pong, unsubscribed, errors) do not wait for backpressure; a client that keeps
    // asking without reading would grow the buffer without bound, so past 4x it is closed.
    if (this.socket.bufferedAmount > 4 * this.core.limits.maxBufferedBytes) {
      this.close(CloseCode.Timeout, "not reading");
      return;
    }
    try {
      this.socket.send(text);
    } catch {
      this.close(CloseCode.InternalError, "send failed");
    }
  }

  /** Sends a frame shared with other connections (an event frame). */
  sendFrame(frame: FrameText): void {
    if (this.state === "closed") return;
    try {
      this.socket.sendFrame(frame);
    } catch {
      this.close(CloseCode.InternalError, "send failed");
    }
  }

  /** False while the socket's send buffer is over the bound: events wait (hub) or drop (live). */
  canSend(): boolean {
    if (this.#paused) return false;
    if (this.socket.bufferedAmount <= this.core.limits.maxBufferedBytes) return true;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.#paused = { promise, resolve };
    this.core.metrics.pausedConnections++;
    this.core.metrics.backpressurePauses++;
    this.core.watchPaused(this);
    return false;
  }

  /** Resolves once the send buffer has drained below half the bound (or the connection closed). */
  writable(): Promise<void> {
    return this.#paused?.promise ?? Promise.resolve();
  }

  /** @internal Called by the poller; true once the connection is no longer paused. */
  checkDrained(): boolean {
    if (!this.#paused) return true;
    if (this.state !== "closed" && this.socket.bufferedAmount > this.core.limits.maxBufferedBytes / 2) return false;
    const paused = this.#paused;
    this.#paused = undefined;
    this.core.metrics.pausedConnections--;
    paused.resolve();
    return true;
  }

  // ---- errors ----

  protected error(code: ErrorCode, message: string, id?: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}): void {
    this.core.metrics.bump(this.core.metrics.errors, code);
    this.send(encode({ type: "error", id, code, message, ...extra }));
  }

  protected refuse(code: ErrorCode, message: string, closeCode: CloseCode, limit?: LimitName): void {
    this.core.log(code === ErrorCode.LimitExceeded ? "warn" : "info", "connection refused", { connection: this.id, code, limit, reason: message });
    this.error(code, message, undefined, limit ? { limit } : {});
    this.close(closeCode, message);
  }

  protected protocolError(err: ProtocolError | Error): void {
    const message = isTidemarkError(err) ? err.message : "protocol error";
    this.core.metrics.bump(this.core.metrics.rejected, "protocol_error");
    this.core.log("info", "protocol error", { connection: this.id, reason: message });
    this.error(ErrorCode.ProtocolError, message);
    this.close(CloseCode.ProtocolError, "protocol error");
  }
}
