/**
 * One WebSocket connection: the protocol state machine (hello, subscribe, unsubscribe, refresh,
 * heartbeats), its limits and its subscriptions. Frames are handled one at a time, in order.
 */
import {
  CloseCode,
  ErrorCode,
  LimitName,
  PROTOCOL_VERSION,
  assertTenantId,
  isTidemarkError,
  utf8Length,
  type ClientFrame,
  type HelloFrame,
  type RefreshFrame,
  type SubscribeFrame,
} from "@tidemark/shared";
import { defaultExpiresAt, defaultPrincipalKey } from "./options.js";
import { encode, parseClientFrame, ProtocolError } from "./frames.js";
import { principalId } from "./principal-id.js";
import { Subscription } from "./subscription.js";
import type { BridgeCore, BridgeSocket, FrameText } from "./core.js";

type State = "new" | "open" | "expired" | "closed";

let nextConnection = 0;
/** Frames a connection may have waiting to be handled before it is closed as a protocol error. */
const MAX_IN_FLIGHT = 256;

/** Headers kept after `hello` for later `authenticate` calls (refresh, reauthenticate). */
const KEPT_HEADERS = ["authorization", "cookie", "origin", "user-agent", "x-forwarded-for", "x-real-ip", "forwarded"];

/** A light copy of the upgrade request: a Request holds an AbortSignal, a URL and all headers. */
function keep(request: Request): { url: string; headers: string[] } {
  const headers: string[] = [];
  for (const name of KEPT_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.push(name, value);
  }
  return { url: request.url, headers };
}

function rebuild(kept: { url: string; headers: string[] }): Request {
  const headers = new Headers();
  for (let i = 0; i < kept.headers.length; i += 2) headers.set(kept.headers[i]!, kept.headers[i + 1]!);
  return new Request(kept.url, { headers });
}
const processTag = Math.random().toString(36).slice(2, 8);

/** @internal */
export class Connection<P = unknown> {
  readonly id = `c${processTag}${(nextConnection++).toString(36)}`;
  readonly core: BridgeCore<P>;
  #subs: Map<string, Subscription<P>> | undefined;
  state: State = "new";
  principal: P | undefined;
  /** Deadline (ms) for `hello`, or for a `refresh` after the token expired. */
  deadline: number;
  expiresAt: number | undefined;
  lastSeen = Date.now();
  /** When the next heartbeat ping is due. */
  nextPingAt: number;
  readonly #socket: BridgeSocket;
  /** The upgrade request until authenticated, then a light copy (a Request holds an AbortSignal and more). */
  #request: Request | { url: string; headers: string[] };
  readonly #cookieToken: string | undefined;
  #token: string | undefined;
  #principalKey: string | undefined;
  /** What the client is told of the principal (welcome, refreshed): see principal-id.ts. */
  #principalId: string | undefined;
  #queue: Promise<void> = Promise.resolve();
  /** Frames received and not yet handled (handling is sequential; authorize may be slow). */
  #inFlight = 0;
  #tokens: number;
  #refilled = Date.now();
  #paused: { promise: Promise<void>; resolve: () => void } | undefined;

  /** Open subscriptions by id (made on first subscribe: most of a socket's life is idle). */
  get subs(): Map<string, Subscription<P>> {
    return (this.#subs ??= new Map());
  }

  constructor(core: BridgeCore<P>, socket: BridgeSocket, request: Request, cookieToken: string | undefined) {
    this.core = core;
    this.#socket = socket;
    this.#request = request;
    this.#cookieToken = cookieToken;
    this.deadline = Date.now() + core.limits.unauthenticatedTimeMs;
    this.nextPingAt = Date.now() + core.heartbeatMs;
    this.#tokens = core.limits.subscribeRatePerSecond * 2;
  }

  // ---- sending and backpressure ----

  send(text: string): void {
    if (this.state === "closed") return;
    // Replies (pong, unsubscribed, errors) do not wait for backpressure; a client that keeps
    // asking without reading would grow the buffer without bound, so past 4x it is closed.
    if (this.#socket.bufferedAmount > 4 * this.core.limits.maxBufferedBytes) {
      this.close(CloseCode.Timeout, "not reading");
      return;
    }
    try {
      this.#socket.send(text);
    } catch {
      this.close(CloseCode.InternalError, "send failed");
    }
  }

  /** Sends a frame shared with other connections (an event frame). */
  sendFrame(frame: FrameText): void {
    if (this.state === "closed") return;
    try {
      this.#socket.sendFrame(frame);
    } catch {
      this.close(CloseCode.InternalError, "send failed");
    }
  }

  /** False while the socket's send buffer is over the bound: events wait (hub) or drop (live). */
  canSend(): boolean {
    if (this.#paused) return false;
    if (this.#socket.bufferedAmount <= this.core.limits.maxBufferedBytes) return true;
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
    if (this.state !== "closed" && this.#socket.bufferedAmount > this.core.limits.maxBufferedBytes / 2) return false;
    const paused = this.#paused;
    this.#paused = undefined;
    this.core.metrics.pausedConnections--;
    paused.resolve();
    return true;
  }

  // ---- inbound ----

  onMessage(data: unknown): void {
    if (this.state === "closed") return;
    this.lastSeen = Date.now();
    if (typeof data !== "string") {
      this.#protocolError(new ProtocolError("binary frames are not part of the protocol"));
      return;
    }
    const max = this.core.limits.maxFrameBytes;
    if (data.length > max || (data.length * 3 > max && utf8Length(data) > max)) {
      this.#refuse(ErrorCode.LimitExceeded, `frame over ${max} bytes`, CloseCode.FrameTooLarge, LimitName.FrameBytes);
      return;
    }
    let frame: ClientFrame;
    try {
      frame = parseClientFrame(data);
    } catch (err) {
      this.#protocolError(err as ProtocolError);
      return;
    }
    // Frames wait their turn while an authorize call runs; a client that keeps sending
    // meanwhile must not queue without bound.
    if (++this.#inFlight > MAX_IN_FLIGHT) {
      this.#protocolError(new ProtocolError(`more than ${MAX_IN_FLIGHT} frames waiting to be handled`));
      return;
    }
    this.#queue = this.#queue
      .then(() => this.#handle(frame))
      .catch((err) => {
        this.core.log("error", "frame handling failed", { connection: this.id, error: String(err) });
        this.#error(ErrorCode.Internal, "internal error");
      })
      .finally(() => this.#inFlight--);
  }

  async #handle(frame: ClientFrame): Promise<void> {
    if (this.state === "closed") return;
    if (this.state === "new" && frame.type !== "hello") {
      this.#protocolError(new ProtocolError(`expected hello first, got ${frame.type}`));
      return;
    }
    switch (frame.type) {
      case "hello":
        return this.#hello(frame);
      case "subscribe":
        return this.#subscribe(frame);
      case "unsubscribe": {
        const sub = this.subs.get(frame.id);
        if (sub) this.#remove(sub);
        this.send(encode({ type: "unsubscribed", id: frame.id }));
        return;
      }
      case "refresh":
        return this.#refresh(frame);
      case "ping":
        this.send(encode({ type: "pong" }));
        return;
      case "pong":
        return;
    }
  }

  // ---- authentication ----

  async #authenticate(token: string | undefined): Promise<P | undefined> {
    if (!token) return undefined;
    try {
      const r = this.#request;
      const request = r instanceof Request ? r : rebuild(r);
      return (await this.core.options.authenticate(token, request)) ?? undefined;
    } catch (err) {
      this.core.log("info", "authenticate threw", { connection: this.id, error: String(err) });
      return undefined;
    }
  }

  async #hello(frame: HelloFrame): Promise<void> {
    if (this.state !== "new") {
      this.#protocolError(new ProtocolError("hello was already sent"));
      return;
    }
    const token = frame.token ?? this.#cookieToken;
    const principal = await this.#authenticate(token);
    if (this.state !== "new") return;
    if (principal === undefined) {
      this.core.metrics.bump(this.core.metrics.rejected, "unauthorized");
      this.#refuse(ErrorCode.Unauthorized, token ? "authentication failed" : "no token in hello or cookie", CloseCode.Unauthorized);
      return;
    }
    const key = (this.core.options.principalKey ?? defaultPrincipalKey)(principal);
    const id = await principalId(key);
    if (this.state !== "new") return;
    const count = this.core.principals.get(key) ?? 0;
    if (count >= this.core.limits.maxConnectionsPerPrincipal) {
      this.core.metrics.bump(this.core.metrics.rejected, "connections_per_principal");
      this.#refuse(
        ErrorCode.LimitExceeded,
        `more than ${this.core.limits.maxConnectionsPerPrincipal} connections for this principal`,
        CloseCode.TooManyConnections,
        LimitName.ConnectionsPerPrincipal,
      );
      return;
    }
    this.core.principals.set(key, count + 1);
    this.#principalKey = key;
    this.#principalId = id;
    this.#token = token;
    this.principal = principal;
    this.expiresAt = (this.core.options.expiresAt ?? defaultExpiresAt)(principal);
    this.state = "open";
    if (this.#request instanceof Request) this.#request = keep(this.#request);
    const { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond } = this.core.limits;
    this.send(
      encode({
        type: "welcome",
        v: PROTOCOL_VERSION,
        connectionId: this.id,
        heartbeatMs: this.core.heartbeatMs,
        limits: { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond },
        expiresAt: this.expiresAt,
        principal: id,
      }),
    );
    this.core.log("debug", "connection authenticated", { connection: this.id, principal: key });
  }

  async #refresh(frame: RefreshFrame): Promise<void> {
    const principal = await this.#authenticate(frame.token);
    if (this.state === "closed") return;
    if (principal === undefined) {
      this.#revoke("the refreshed token was refused");
      return;
    }
    this.#token = frame.token;
    await this.#adopt(principal);
    if ((this.state as State) === "closed") return;
    this.send(encode({ type: "refreshed", expiresAt: this.expiresAt, principal: this.#principalId }));
  }

  /** Takes a (re)authenticated principal and authorizes every subscription again. */
  async #adopt(principal: P): Promise<void> {
    const key = (this.core.options.principalKey ?? defaultPrincipalKey)(principal);
    if (key !== this.#principalKey) {
      const id = await principalId(key);
      if (this.state === "closed") return;
      this.#principalId = id;
      this.#releasePrincipal();
      this.core.principals.set(key, (this.core.principals.get(key) ?? 0) + 1);
      this.#principalKey = key;
    }
    this.principal = principal;
    this.expiresAt = (this.core.options.expiresAt ?? defaultExpiresAt)(principal);
    this.state = "open";
    await this.reauthorize();
  }

  /** Authorizes every subscription again; refused ones end with `unsubscribed` FORBIDDEN. */
  async reauthorize(): Promise<void> {
    for (const sub of [...this.subs.values()]) {
      if (sub.stopped || this.state !== "open") continue;
      const allowed = await this.#authorize(sub.topicName, sub.tenantId, sub.mode, sub.exposed);
      if (!allowed && !sub.stopped) this.endSubscription(sub, ErrorCode.Forbidden, "access to this subscription was revoked");
    }
  }

  /** Runs `authenticate` again on the token (server-side revocation check). */
  async reauthenticate(): Promise<void> {
    if (this.state !== "open") return;
    const principal = await this.#authenticate(this.#token);
    if (this.state !== "open") return;
    if (principal === undefined) this.#revoke("the token was revoked");
    else await this.#adopt(principal);
  }

  /** Ends every subscription with UNAUTHORIZED and closes 4401. */
  #revoke(message: string): void {
    this.core.metrics.bump(this.core.metrics.rejected, "revoked");
    for (const sub of [...this.subs.values()]) this.endSubscription(sub, ErrorCode.Unauthorized, message);
    this.#refuse(ErrorCode.Unauthorized, message, CloseCode.Unauthorized);
  }

  /** The token expired: subscriptions end; the client has `unauthenticatedTimeMs` to refresh. */
  expire(now: number): void {
    if (this.state !== "open") return;
    for (const sub of [...this.subs.values()]) this.endSubscription(sub, ErrorCode.Unauthorized, "the token expired");
    this.state = "expired";
    this.deadline = now + this.core.limits.unauthenticatedTimeMs;
    this.core.log("info", "token expired", { connection: this.id });
  }

  /** Called by the bridge's timer: enforces the hello and refresh deadlines and token expiry. */
  tick(now: number): void {
    if ((this.state === "new" || this.state === "expired") && now > this.deadline) {
      this.core.metrics.bump(this.core.metrics.rejected, "unauthenticated_time");
      this.#refuse(
        ErrorCode.Unauthorized,
        this.state === "new" ? "no valid hello in time" : "the token expired and was not refreshed in time",
        CloseCode.Timeout,
        LimitName.UnauthenticatedTime,
      );
    } else if (this.state === "open" && this.expiresAt !== undefined && now >= this.expiresAt) {
      this.expire(now);
    }
  }

  // ---- subscriptions ----

  #allowSubscribe(): number {
    const rate = this.core.limits.subscribeRatePerSecond;
    const now = Date.now();
    this.#tokens = Math.min(rate * 2, this.#tokens + ((now - this.#refilled) * rate) / 1000);
    this.#refilled = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) * 1000) / rate);
  }

  async #authorize(topic: string, tenantId: string | undefined, mode: SubscribeFrame["mode"], exposed: { authorize: (p: P, r: { topic: string; tenantId: string | undefined; mode: SubscribeFrame["mode"] }) => boolean | Promise<boolean> }): Promise<boolean> {
    try {
      return (await exposed.authorize(this.principal as P, { topic, tenantId, mode })) === true;
    } catch (err) {
      this.core.log("warn", "authorize threw", { connection: this.id, topic, error: String(err) });
      return false;
    }
  }

  async #subscribe(frame: SubscribeFrame): Promise<void> {
    const { id, topic, tenantId, mode, cursor } = frame;
    const refuse = (code: ErrorCode, message: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}) => {
      this.core.metrics.bump(this.core.metrics.rejected, extra.limit ?? code.toLowerCase());
      this.#error(code, message, id, extra);
    };
    if (this.state !== "open") return refuse(ErrorCode.Unauthorized, "the token expired: send refresh first");
    if (this.subs.has(id)) return refuse(ErrorCode.InvalidArgument, `subscription id ${JSON.stringify(id)} is already in use`);
    const retryAfterMs = this.#allowSubscribe();
    if (retryAfterMs > 0) {
      return refuse(ErrorCode.LimitExceeded, "subscribing too fast", { limit: LimitName.SubscribeRate, retryAfterMs });
    }
    if (this.subs.size >= this.core.limits.maxSubscriptions) {
      return refuse(ErrorCode.LimitExceeded, `more than ${this.core.limits.maxSubscriptions} subscriptions on one connection`, {
        limit: LimitName.Subscriptions,
      });
    }
    const exposed = this.core.topics.get(topic);
    if (!exposed || (exposed.modes && !exposed.modes.includes(mode))) {
      return refuse(ErrorCode.TopicNotFound, `topic ${JSON.stringify(topic)} is not exposed${exposed ? ` in ${mode} mode` : ""}`);
    }
    if (tenantId !== undefined) {
      try {
        assertTenantId(tenantId);
      } catch (err) {
        return refuse(ErrorCode.InvalidArgument, (err as Error).message);
      }
    }
    if (mode === "live" && cursor !== undefined) return refuse(ErrorCode.InvalidArgument, "a live subscription takes no cursor");
    for (const sub of this.subs.values()) {
      if (sub.topicName === topic && sub.tenantId === tenantId && sub.mode === mode) {
        return refuse(ErrorCode.InvalidArgument, `already subscribed to this topic and tenant as ${JSON.stringify(sub.id)}`);
      }
    }
    const allowed = await this.#authorize(topic, tenantId, mode, exposed);
    if (this.state !== "open") return;
    if (!allowed) {
      this.core.log("info", "subscription forbidden", { connection: this.id, topic, tenantId, principal: this.#principalKey });
      return refuse(ErrorCode.Forbidden, "not allowed to subscribe to this topic and tenant");
    }
    const sub = new Subscription<P>(this, { id, topicName: topic, tenantId, mode, exposed });
    this.subs.set(id, sub);
    this.core.metrics.subscriptions[mode]++;
    this.send(encode({ type: "subscribed", id, hub: sub.hubId, mode }));
    sub.start(cursor);
  }

  /** Ends a subscription from the server side with an `unsubscribed` frame. */
  endSubscription(sub: Subscription<P>, code: ErrorCode | undefined, message: string | undefined): void {
    if (this.subs.get(sub.id) !== sub) return;
    this.#remove(sub);
    this.send(encode({ type: "unsubscribed", id: sub.id, code, message }));
  }

  #remove(sub: Subscription<P>): void {
    if (this.subs.get(sub.id) !== sub) return;
    this.subs.delete(sub.id);
    this.core.metrics.subscriptions[sub.mode]--;
    sub.stop();
  }

  // ---- errors and closing ----

  #error(code: ErrorCode, message: string, id?: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}): void {
    this.core.metrics.bump(this.core.metrics.errors, code);
    this.send(encode({ type: "error", id, code, message, ...extra }));
  }

  #refuse(code: ErrorCode, message: string, closeCode: CloseCode, limit?: LimitName): void {
    this.core.log(code === ErrorCode.LimitExceeded ? "warn" : "info", "connection refused", { connection: this.id, code, limit, reason: message });
    this.#error(code, message, undefined, limit ? { limit } : {});
    this.close(closeCode, message);
  }

  #protocolError(err: ProtocolError | Error): void {
    const message = isTidemarkError(err) ? err.message : "protocol error";
    this.core.metrics.bump(this.core.metrics.rejected, "protocol_error");
    this.core.log("info", "protocol error", { connection: this.id, reason: message });
    this.#error(ErrorCode.ProtocolError, message);
    this.close(CloseCode.ProtocolError, "protocol error");
  }

  /** Closes the socket and releases everything. Idempotent. */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.#cleanup();
    try {
      this.#socket.close(code, reason.slice(0, 120));
    } catch {
      // already closed by the peer
    }
  }

  /** The socket closed (either side). */
  onClose(): void {
    if (this.state !== "closed") this.#cleanup();
  }

  #cleanup(): void {
    this.state = "closed";
    for (const sub of [...this.subs.values()]) this.#remove(sub);
    this.#releasePrincipal();
    this.checkDrained();
    if (this.core.connections.delete(this)) this.core.metrics.connections--;
  }

  #releasePrincipal(): void {
    const key = this.#principalKey;
    if (key === undefined) return;
    this.#principalKey = undefined;
    const n = (this.core.principals.get(key) ?? 1) - 1;
    if (n <= 0) this.core.principals.delete(key);
    else this.core.principals.set(key, n);
  }
}
