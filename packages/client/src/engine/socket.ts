/**
 * The engine's one WebSocket to the bridge: opens it, says hello, answers pings, watches for
 * silence. Its state changes in one place (`setState`, driven by the pure machine in
 * state.ts) and every dropped connection goes through `disconnect()`. Frames other than the
 * connection's own go to the engine untouched.
 */
import { CloseCode, PONG_AFTER_BEATS, PROTOCOL_NAME, PROTOCOL_VERSION, type ClientFrame, type ServerFrame, type WelcomeFrame } from "@tidemark/shared";
import type { BackoffOptions } from "../backoff.js";
import { finalRefusal } from "../refusal.js";
import { transition, type ConnEvent, type ConnState } from "../state.js";

/** @internal A change of the socket's state. */
export interface StateChange {
  oldState: ConnState;
  newState: ConnState;
}

/** Frames the socket handles itself; the engine gets every other one. */
type SocketFrame = Extract<ServerFrame, { type: "welcome" | "ping" | "pong" | "drain" }>;
/** @internal Frames for the engine. */
export type EngineFrame = Exclude<ServerFrame, SocketFrame>;

/** @internal */
export interface SocketHooks {
  /** The token for `hello`; undefined sends none (a cookie may carry it). */
  token(): Promise<string | undefined>;
  welcome(frame: WelcomeFrame): void;
  frame(frame: EngineFrame): void;
  state(change: StateChange): void;
  /** The connection dropped with this close code (`CloseCode.Unauthorized`: the token was refused). */
  closed(code: number): void;
}

/**
 * A socket that heard nothing for this many of the server's heartbeats is dead: with the default
 * 10 s, a silent server (frozen, a dead machine behind a balancer that keeps the TCP connection)
 * is noticed within 16–17 s, and the engine moves on (a ping late by up to 6 s is not taken for silence).
 */
const DEAD_AFTER_BEATS = 1.6;
/** How often the watchdog looks. */
const WATCHDOG_MS = 1_000;

/** @internal */
export class Socket {
  private current: ConnState = { kind: "idle" };
  private socket: WebSocket | undefined;
  /** Bumped when a socket is dropped: its late callbacks are ignored. */
  private generation = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  /** Runs from a socket's creation to its `welcome`: a server that never answers is given up. */
  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private lastHeard = 0;
  /** When this socket last sent a frame: a 1.5 server needs one every few heartbeats, not a pong per ping. */
  private lastSent = 0;
  /** The current server's heartbeat and protocol revision (from `welcome`). */
  private heartbeatMs = 0;
  private revision = 0;
  /** Closes with 4401 since the last `welcome`: the second in a row is final (refusal.ts). */
  private tokenRefusals = 0;
  /** Sockets opened since start, for stats. */
  opened = 0;

  private readonly handlers: { [K in SocketFrame["type"]]: (frame: Extract<SocketFrame, { type: K }>) => void } = {
    welcome: (frame) => {
      this.stopConnectTimer();
      this.tokenRefusals = 0;
      this.dispatch({ type: "welcome", connectionId: frame.connectionId });
      this.revision = frame.revision ?? 0;
      this.startWatchdog(frame.heartbeatMs);
      this.hooks.welcome(frame);
    },
    // Any frame tells a 1.5 server the client lives: a pong only when nothing else went for a while.
    ping: () => {
      if (this.revision < 5 || Date.now() - this.lastSent >= this.heartbeatMs * PONG_AFTER_BEATS) this.send({ type: "pong" });
    },
    pong: () => undefined,
    drain: (frame) => this.disconnect(CloseCode.Normal, "server draining", true, frame.retryAfterMs),
  };

  constructor(
    private readonly url: string,
    private readonly backoff: BackoffOptions,
    private readonly connectTimeoutMs: number,
    private readonly hooks: SocketHooks,
  ) {}

  get state(): ConnState {
    return this.current;
  }

  /** Feeds an event to the state machine and carries out what it decides. */
  dispatch(event: ConnEvent): void {
    const { state, action } = transition(this.current, event, this.backoff);
    this.setState(state);
    switch (action.type) {
      case "connect":
        this.clearRetry();
        void this.connect();
        return;
      case "disconnect":
        this.clearRetry();
        // Stopped (another user signs in) or offline: the next token starts a new count.
        this.tokenRefusals = 0;
        this.disconnect(CloseCode.Normal, "client disconnect", false);
        return;
      case "schedule":
        this.clearRetry();
        this.retryTimer = setTimeout(() => this.dispatch({ type: "retry" }), action.delayMs);
        return;
      case "none":
        return;
    }
  }

  /** Sends a frame when the socket is open; false otherwise (the engine resubscribes on welcome). */
  send(frame: ClientFrame): boolean {
    if (this.current.kind !== "open" || this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    this.lastSent = Date.now();
    return true;
  }

  /** The one place the state changes. */
  private setState(newState: ConnState): void {
    const oldState = this.current;
    if (newState === oldState) return;
    this.current = newState;
    this.hooks.state({ oldState, newState });
  }

  /**
   * Every dropped connection ends here: the socket (if any) is closed with `code` and forgotten,
   * its timers stop, and with `reconnect` the state machine hears of it (and plans the retry).
   * Without it the state machine already decided (stop, offline).
   */
  private disconnect(code: number, reason: string, reconnect: boolean, retryAfterMs?: number): void {
    this.generation++;
    this.stopWatchdog();
    this.stopConnectTimer();
    const socket = this.socket;
    this.socket = undefined;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(code, reason);
    this.hooks.closed(code);
    if (reconnect) this.dispatch({ type: "closed", reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    let token: string | undefined;
    try {
      token = await this.hooks.token();
    } catch (err) {
      if (generation === this.generation) this.disconnect(CloseCode.Normal, `getToken failed: ${String(err)}`, true);
      return;
    }
    // Superseded (offline, stop) while the token was fetched.
    if (generation !== this.generation || this.current.kind !== "connecting") return;
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url, PROTOCOL_NAME);
    } catch (err) {
      this.disconnect(CloseCode.Normal, `bad url: ${String(err)}`, true);
      return;
    }
    this.socket = socket;
    this.opened++;
    // A bridge that is frozen, or a proxy that holds the upgrade, leaves the socket connecting
    // (or open without `welcome`) for as long as the TCP connection lives: give up and retry.
    this.connectTimer = setTimeout(() => {
      if (generation === this.generation) this.disconnect(CloseCode.Timeout, "no welcome within connectTimeoutMs", true);
    }, this.connectTimeoutMs);
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
    // An error (a refused upgrade, a reset) is always followed by close, which decides; the
    // listener is there so WebSocket implementations that throw unheard errors (Node's `ws`) don't.
    socket.onerror = () => undefined;
    socket.onclose = (event: CloseEvent) => {
      if (generation !== this.generation) return;
      const reason = event.reason || `closed (${event.code})`;
      if (event.code === CloseCode.Unauthorized) this.tokenRefusals++;
      const origin = typeof location === "undefined" ? undefined : location.origin;
      const error = finalRefusal({ code: event.code, reason, tokenRefusals: this.tokenRefusals, ...(origin ? { origin } : {}) });
      if (!error) {
        this.disconnect(event.code, reason, true);
        return;
      }
      // Final: no retry until a tab attaches again (the state machine's `start`).
      this.tokenRefusals = 0;
      this.disconnect(event.code, reason, false);
      this.dispatch({ type: "failed", error });
    };
  }

  private receive(frame: ServerFrame): void {
    if (frame.type in this.handlers) {
      const handler = this.handlers[frame.type as SocketFrame["type"]] as (frame: SocketFrame) => void;
      handler(frame as SocketFrame);
    } else {
      this.hooks.frame(frame as EngineFrame);
    }
  }

  /**
   * The server pings every `heartbeatMs`: a socket that heard nothing for 1.6 beats is dead. The
   * client sends no pings of its own (the server's carry the heartbeat both ways); it looks once
   * a second, so a silent server is noticed within a second of the limit.
   */
  private startWatchdog(heartbeatMs: number): void {
    this.stopWatchdog();
    this.heartbeatMs = Math.max(1_000, heartbeatMs || 15_000);
    this.lastHeard = Date.now();
    this.lastSent = Date.now();
    const deadAfter = this.heartbeatMs * DEAD_AFTER_BEATS;
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastHeard > deadAfter) this.disconnect(CloseCode.Timeout, "heartbeat timeout", true);
    }, Math.min(WATCHDOG_MS, this.heartbeatMs / 4));
  }

  private stopConnectTimer(): void {
    if (this.connectTimer !== undefined) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private clearRetry(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }
}
