/**
 * @internal The sending half of a connection, a part it owns: replies, shared event frames,
 * error frames and refusals, and backpressure (pause above `maxBufferedBytes`, resume below half
 * of it). It sees its connection only as an `OutboundHost` (its id for logs, whether it closed,
 * and how to close it), so it can be driven on its own (outbound.test.ts).
 */
import { CloseCode, ErrorCode, isTidemarkError, type LimitName, type ProtocolError } from "@tidemark/shared";
import { encode } from "./frames.js";
import type { BridgeContext } from "./context.js";
import type { ResolvedBridgeOptions } from "./options.js";
import type { Pausable } from "./backpressure.js";
import type { BridgeSocket, FrameText } from "./socket.js";

/** @internal What an Outbound uses of its connection. */
export interface OutboundHost {
  /** The connection's id, for logs. */
  readonly id: string;
  /** True once the connection closed: nothing more is sent. */
  readonly closed: boolean;
  /** Closes the connection (a refusal, a reader that does not read, a failed send). */
  close(code: number, reason: string): void;
}

/** @internal What an Outbound uses of the bridge. */
export type OutboundContext = Pick<BridgeContext<unknown>, "metrics" | "backpressure" | "log"> & { readonly options: Pick<ResolvedBridgeOptions<unknown>, "limits"> };

/** @internal */
export class Outbound implements Pausable {
  readonly #context: OutboundContext;
  readonly #socket: BridgeSocket;
  readonly #host: OutboundHost;
  #paused: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(context: OutboundContext, socket: BridgeSocket, host: OutboundHost) {
    this.#context = context;
    this.#socket = socket;
    this.#host = host;
  }

  send(text: string): void {
    if (!this.#mayReply()) return;
    try {
      this.#socket.send(text);
    } catch {
      this.#host.close(CloseCode.InternalError, "send failed");
    }
  }

  /** Sends a frame shared with other connections (an event frame; `single`: see BridgeSocket). */
  sendFrame(frame: FrameText, single?: boolean): void {
    if (this.#host.closed) return;
    try {
      this.#socket.sendFrame(frame, single);
    } catch {
      this.#host.close(CloseCode.InternalError, "send failed");
    }
  }

  /** A heartbeat: a shared frame sent on its own, uncorked, under the rule of replies. */
  beat(frame: FrameText): void {
    if (this.#mayReply()) this.sendFrame(frame, true);
  }

  /**
   * Replies (pong, unsubscribed, errors) and heartbeats do not wait for backpressure; a client
   * that keeps asking without reading would grow the buffer without bound, so past 4x the bound
   * it is closed. False when nothing may be sent.
   */
  #mayReply(): boolean {
    if (this.#host.closed) return false;
    if (this.#socket.bufferedAmount > 4 * this.#context.options.limits.maxBufferedBytes) {
      this.#host.close(CloseCode.Timeout, "not reading");
      return false;
    }
    return true;
  }

  /** Closes the socket itself (the connection has released what it held). */
  closeSocket(code: number, reason: string): void {
    try {
      this.#socket.close(code, reason.slice(0, 120));
    } catch {
      // already closed by the peer
    }
  }

  /** False while the socket's send buffer is over the bound: events wait (hub) or drop (live). */
  canSend(): boolean {
    if (this.#paused) return false;
    if (this.#socket.bufferedAmount <= this.#context.options.limits.maxBufferedBytes) return true;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.#paused = { promise, resolve };
    this.#context.metrics.pausedConnections++;
    this.#context.metrics.backpressurePauses++;
    this.#context.backpressure.watch(this);
    return false;
  }

  /** Resolves once the send buffer has drained below half the bound (or the connection closed). */
  writable(): Promise<void> {
    return this.#paused?.promise ?? Promise.resolve();
  }

  /** @internal Called by the poller (and on close); true once no longer paused. */
  checkDrained(): boolean {
    if (!this.#paused) return true;
    if (!this.#host.closed && this.#socket.bufferedAmount > this.#context.options.limits.maxBufferedBytes / 2) return false;
    const paused = this.#paused;
    this.#paused = undefined;
    this.#context.metrics.pausedConnections--;
    paused.resolve();
    return true;
  }

  // ---- errors ----

  /** Sends an `error` frame (of a request when `id` is set) and counts it. */
  error(code: ErrorCode, message: string, id?: string, extra: { limit?: LimitName; retryAfterMs?: number; ref?: string } = {}): void {
    this.#context.metrics.bump(this.#context.metrics.errors, code);
    this.send(encode({ type: "error", id, code, message, ...extra }));
  }

  /** Sends an `error` frame, then closes the connection with `closeCode`. */
  refuse(code: ErrorCode, message: string, closeCode: CloseCode, limit?: LimitName): void {
    this.#context.log(code === ErrorCode.LimitExceeded ? "warn" : "info", "connection refused", { connection: this.#host.id, code, limit, reason: message });
    this.error(code, message, undefined, limit ? { limit } : {});
    this.#host.close(closeCode, message);
  }

  /** The client broke the protocol: a PROTOCOL_ERROR frame, then close 4400. */
  protocolError(err: ProtocolError | Error): void {
    const message = isTidemarkError(err) ? err.message : "protocol error";
    this.#context.metrics.bump(this.#context.metrics.rejected, "protocol_error");
    this.#context.log("info", "protocol error", { connection: this.#host.id, reason: message });
    this.error(ErrorCode.ProtocolError, message);
    this.#host.close(CloseCode.ProtocolError, "protocol error");
  }
}
