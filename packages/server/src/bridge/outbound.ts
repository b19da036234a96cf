/**
 * @internal The sending half of a connection and its state: replies, shared event frames,
 * backpressure (pause above `maxBufferedBytes`, resume below half of it), and `setState`, the
 * one place the connection's state changes. The protocol lives in Session and Connection.
 */
import { CloseCode, ErrorCode, isTidemarkError, type LimitName, type ProtocolError } from "@tidemark/shared";
import { encode } from "./frames.js";
import type { BridgeContext } from "./context.js";
import type { BridgeSocket, FrameText } from "./socket.js";
import { canMove, type ConnectionState, type StateKind } from "./state.js";

let nextConnection = 0;
const processTag = Math.random().toString(36).slice(2, 8);

export abstract class Outbound<P> {
  /** A number, its id made when asked (logs, welcome): a string per socket costs ~32 bytes. */
  readonly #number = nextConnection++;
  readonly context: BridgeContext<P>;
  protected readonly socket: BridgeSocket;
  #state: ConnectionState<P>;
  #paused: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(context: BridgeContext<P>, socket: BridgeSocket) {
    this.context = context;
    this.socket = socket;
    this.#state = { kind: "new", deadline: Date.now() + context.options.limits.unauthenticatedTimeMs };
  }

  /** The connection's id, unique in the process and across restarts (the process tag). */
  get id(): string {
    return `c${processTag}${this.#number.toString(36)}`;
  }

  /** Which state the connection is in. */
  get state(): StateKind {
    return this.#state.kind;
  }

  /** The authenticated principal while the connection is open. */
  get principal(): P | undefined {
    return this.#state.kind === "open" ? this.#state.principal : undefined;
  }

  /** The connection's state with its data (deadline, principal, expiry). */
  protected get current(): ConnectionState<P> {
    return this.#state;
  }

  /** Moves to `next`: the only place the state changes. A transition the table does not list is a bug. */
  protected setState(next: ConnectionState<P>): void {
    if (!canMove(this.#state.kind, next.kind)) throw new Error(`connection ${this.id}: no transition from ${this.#state.kind} to ${next.kind}`);
    this.#state = next;
  }

  abstract close(code: number, reason: string): void;

  send(text: string): void {
    if (this.state === "closed") return;
    // Replies (pong, unsubscribed, errors) do not wait for backpressure; a client that keeps
    // asking without reading would grow the buffer without bound, so past 4x it is closed.
    if (this.socket.bufferedAmount > 4 * this.context.options.limits.maxBufferedBytes) {
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
    if (this.socket.bufferedAmount <= this.context.options.limits.maxBufferedBytes) return true;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.#paused = { promise, resolve };
    this.context.metrics.pausedConnections++;
    this.context.metrics.backpressurePauses++;
    this.context.backpressure.watch(this);
    return false;
  }

  /** Resolves once the send buffer has drained below half the bound (or the connection closed). */
  writable(): Promise<void> {
    return this.#paused?.promise ?? Promise.resolve();
  }

  /** @internal Called by the poller; true once the connection is no longer paused. */
  checkDrained(): boolean {
    if (!this.#paused) return true;
    if (this.state !== "closed" && this.socket.bufferedAmount > this.context.options.limits.maxBufferedBytes / 2) return false;
    const paused = this.#paused;
    this.#paused = undefined;
    this.context.metrics.pausedConnections--;
    paused.resolve();
    return true;
  }

  // ---- errors ----

  protected error(code: ErrorCode, message: string, id?: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}): void {
    this.context.metrics.bump(this.context.metrics.errors, code);
    this.send(encode({ type: "error", id, code, message, ...extra }));
  }

  protected refuse(code: ErrorCode, message: string, closeCode: CloseCode, limit?: LimitName): void {
    this.context.log(code === ErrorCode.LimitExceeded ? "warn" : "info", "connection refused", { connection: this.id, code, limit, reason: message });
    this.error(code, message, undefined, limit ? { limit } : {});
    this.close(closeCode, message);
  }

  protected protocolError(err: ProtocolError | Error): void {
    const message = isTidemarkError(err) ? err.message : "protocol error";
    this.context.metrics.bump(this.context.metrics.rejected, "protocol_error");
    this.context.log("info", "protocol error", { connection: this.id, reason: message });
    this.error(ErrorCode.ProtocolError, message);
    this.close(CloseCode.ProtocolError, "protocol error");
  }
}
