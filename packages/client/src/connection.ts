/**
 * The one WebSocket: opens it, says hello, answers pings, watches for silence, and feeds every
 * change through the pure state machine in `state.ts`. Frames go to the engine untouched.
 */
import { PROTOCOL_NAME, PROTOCOL_VERSION, type ClientFrame, type ServerFrame, type WelcomeFrame } from "@tidemark/shared";
import type { BackoffOptions } from "./backoff.js";
import { transition, type ConnEvent, type ConnState } from "./state.js";

/** @internal */
export interface ConnectionHooks {
  /** The token for `hello`; undefined sends none (a cookie may carry it). */
  token(): Promise<string | undefined>;
  welcome(frame: WelcomeFrame): void;
  frame(frame: ServerFrame): void;
  state(state: ConnState): void;
  /** The socket closed with this code (4401: the token was refused). */
  closed(code: number): void;
}

/** @internal */
export class Connection {
  private current: ConnState = { kind: "idle" };
  private socket: WebSocket | undefined;
  private generation = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private lastHeard = 0;
  /** Sockets opened since start, for stats. */
  opened = 0;

  constructor(
    private readonly url: string,
    private readonly backoff: BackoffOptions,
    private readonly hooks: ConnectionHooks,
  ) {}

  get state(): ConnState {
    return this.current;
  }

  dispatch(event: ConnEvent): void {
    const { state, action } = transition(this.current, event, this.backoff);
    const changed = state !== this.current;
    this.current = state;
    switch (action.type) {
      case "connect":
        this.clearRetry();
        void this.connect();
        break;
      case "disconnect":
        this.clearRetry();
        this.closeSocket(1000, "client disconnect");
        break;
      case "schedule":
        this.clearRetry();
        this.retryTimer = setTimeout(() => this.dispatch({ type: "retry" }), action.delayMs);
        break;
      case "none":
        break;
    }
    if (changed) this.hooks.state(state);
  }

  /** Sends a frame when the socket is open; false otherwise (the engine resubscribes on welcome). */
  send(frame: ClientFrame): boolean {
    if (this.current.kind !== "open" || this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    let token: string | undefined;
    try {
      token = await this.hooks.token();
    } catch (err) {
      if (generation === this.generation) this.dispatch({ type: "closed", reason: `getToken failed: ${String(err)}` });
      return;
    }
    // Superseded (offline, stop) while the token was fetched.
    if (generation !== this.generation || this.current.kind !== "connecting") return;
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url, PROTOCOL_NAME);
    } catch (err) {
      this.dispatch({ type: "closed", reason: `bad url: ${String(err)}` });
      return;
    }
    this.socket = socket;
    this.opened++;
    socket.onopen = () => {
      if (generation !== this.generation) return;
      const hello: ClientFrame = token === undefined ? { type: "hello", v: PROTOCOL_VERSION } : { type: "hello", v: PROTOCOL_VERSION, token };
      socket.send(JSON.stringify(hello));
    };
    socket.onmessage = (message: MessageEvent) => {
      if (generation !== this.generation) return;
      this.lastHeard = Date.now();
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame;
      } catch {
        return;
      }
      this.receive(frame);
    };
    socket.onclose = (event: CloseEvent) => {
      if (generation !== this.generation) return;
      this.stopWatchdog();
      this.socket = undefined;
      this.hooks.closed(event.code);
      this.dispatch({ type: "closed", reason: event.reason || `closed (${event.code})` });
    };
  }

  private receive(frame: ServerFrame): void {
    switch (frame.type) {
      case "welcome":
        this.dispatch({ type: "welcome", connectionId: frame.connectionId });
        this.startWatchdog(frame.heartbeatMs);
        this.hooks.welcome(frame);
        return;
      case "ping":
        this.send({ type: "pong" });
        return;
      case "pong":
        return;
      case "drain": {
        this.closeSocket(1000, "drain");
        this.dispatch({ type: "closed", reason: "server draining", retryAfterMs: frame.retryAfterMs });
        return;
      }
      default:
        this.hooks.frame(frame);
    }
  }

  /** Pings at the server's heartbeat; a socket silent for two and a half beats is dead. */
  private startWatchdog(heartbeatMs: number): void {
    this.stopWatchdog();
    const beat = Math.max(1_000, heartbeatMs || 15_000);
    this.lastHeard = Date.now();
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastHeard > beat * 2.5) {
        const socket = this.socket;
        this.generation++;
        this.stopWatchdog();
        this.socket = undefined;
        socket?.close(4000, "heartbeat timeout");
        this.dispatch({ type: "closed", reason: "heartbeat timeout" });
        return;
      }
      this.send({ type: "ping" });
    }, beat);
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private clearRetry(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private closeSocket(code: number, reason: string): void {
    this.generation++;
    this.stopWatchdog();
    const socket = this.socket;
    this.socket = undefined;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(code, reason);
  }
}
