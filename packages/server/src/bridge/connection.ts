/**
 * One WebSocket connection: the protocol (hello, subscribe, unsubscribe, refresh, heartbeats),
 * its limits and its subscriptions. Frames are handled one at a time, in order. It owns two
 * parts, each seeing it through a small interface: its Session (session.ts: authentication,
 * principal, expiry, the state of state.ts) and its Outbound (outbound.ts: sending, error
 * frames, backpressure). The bridge's ticker calls `tick`.
 */
import {
  CloseCode,
  ErrorCode,
  LimitName,
  ProtocolError,
  SERVER_SILENT_BEATS,
  toErrorPayload,
  utf8Length,
  type ClientFrame,
  type SubscribeFrame,
} from "@tidemark/shared";
import { followRead, markRead, type ReadFramesHost } from "./read-frames.js";
import type { ExposedTopic } from "./options.js";
import { grants, refusal as grantRefusal } from "./grant.js";
import { subscribeRefusal } from "./subscribe-check.js";
import { encode, parseClientFrame } from "./frames.js";
import { Subscription, type SubscriptionSink } from "./subscription.js";
import { Session, type SessionHost } from "./session.js";
import { Outbound, type OutboundHost } from "./outbound.js";
import { TokenBucket } from "./rate.js";
import type { BridgeContext } from "./context.js";
import type { BridgeSocket, FrameText } from "./socket.js";
import type { StateKind } from "./state.js";
import type { WaitingPlace } from "./unauthenticated.js";

/** Frames a connection may have waiting to be handled before it is closed as a protocol error. */
const MAX_IN_FLIGHT = 256;

const PONG = encode({ type: "pong" });
/**
 * The ping every idle connection gets each heartbeat: one frame for all of them, framed once
 * (its wire bytes are cached on it by the Node adapter) and written to each socket as is.
 */
const PING: FrameText = { text: encode({ type: "ping" }) };

/** The queue of an idle connection: one settled promise for all (most sockets are idle). */
const IDLE: Promise<void> = Promise.resolve();

let nextConnection = 0;
const processTag = Math.random().toString(36).slice(2, 8);

/** @internal */
export class Connection<P = unknown> implements SubscriptionSink<P>, SessionHost, OutboundHost, ReadFramesHost {
  /** A number, its id made when asked (logs, welcome): a string per socket costs ~32 bytes. */
  readonly #number = nextConnection++;
  readonly context: BridgeContext<P>;
  /** Sending, error frames and backpressure. */
  readonly #out: Outbound;
  /** Authentication, principal, expiry and the connection's state. */
  readonly #session: Session<P>;
  /** When the client last sent a frame. */
  #lastSeen: number;
  /** When the next heartbeat ping is due. */
  #nextPingAt: number;
  /**
   * Open subscriptions, in the order made; undefined while there are none. An array, not a Map:
   * a connection has a few (at most maxSubscriptions), and a one-entry Map costs ~180 bytes
   * at every socket.
   */
  #subs: Subscription<P>[] | undefined;
  #queue: Promise<void> = IDLE;
  /** Frames received and not yet handled (handling is sequential; authorize may be slow). */
  #inFlight = 0;
  readonly #subscribeRate: TokenBucket;
  /** Made on the first `mark_read` (most connections never send one). */
  #markReadRate: TokenBucket | undefined;

  /** The open subscriptions (a copy: ending one while iterating is safe). */
  get subs(): readonly Subscription<P>[] {
    return this.#subs ? [...this.#subs] : [];
  }

  #sub(id: string): Subscription<P> | undefined {
    return this.#subs?.find((s) => s.id === id);
  }

  /** `counted` is set when the caller counted the socket in `context.unauthenticated`. */
  constructor(context: BridgeContext<P>, socket: BridgeSocket, request: Request, cookieToken: string | undefined, counted?: WaitingPlace) {
    this.context = context;
    this.#out = new Outbound(context, socket, this);
    this.#session = new Session<P>(context, this, request, cookieToken, counted);
    // The first ping comes between half and one interval after the connection opened: sockets
    // that arrived together (a reconnect storm) do not all ping, and get their pongs, in one tick.
    this.#lastSeen = context.clock.now();
    this.#nextPingAt = this.#lastSeen + context.options.heartbeatMs * (0.5 + Math.random() / 2);
    this.#subscribeRate = new TokenBucket(context.options.limits.subscribeRatePerSecond, Date.now());
  }

  /** The connection's id, unique in the process and across restarts (the process tag). */
  get id(): string {
    return `c${processTag}${this.#number.toString(36)}`;
  }

  /** Which state the connection is in (state.ts; kept by its Session). */
  get state(): StateKind {
    return this.#session.state;
  }

  get closed(): boolean {
    return this.#session.state === "closed";
  }

  /** The authenticated principal while the connection is open. */
  get principal(): P | undefined {
    return this.#session.principal;
  }

  /** Token expiry (ms) of the principal while the connection is open. */
  get expiresAt(): number | undefined {
    return this.#session.expiresAt;
  }

  // ---- outbound (the SubscriptionSink, drain) ----

  send(text: string): void {
    this.#out.send(text);
  }

  /** Sends a frame shared with other connections (an event frame). */
  sendFrame(frame: FrameText): void {
    this.#out.sendFrame(frame);
  }

  /** False while the socket's send buffer is over the bound: events wait (hub) or drop (live). */
  canSend(): boolean {
    return this.#out.canSend();
  }

  /** Resolves once the send buffer has drained below half the bound (or the connection closed). */
  writable(): Promise<void> {
    return this.#out.writable();
  }

  /** Sends an `error` frame, then closes the connection (the session's refusals). */
  refuse(code: ErrorCode, message: string, closeCode: CloseCode, limit?: LimitName): void {
    this.#out.refuse(code, message, closeCode, limit);
  }

  /** The client broke the protocol: PROTOCOL_ERROR, then close 4400. */
  protocolError(err: ProtocolError | Error): void {
    this.#out.protocolError(err);
  }

  /** Sends an `error` frame answering request `id` (the connection stays open). */
  requestError(code: ErrorCode, message: string, id: string, extra: { limit?: LimitName; retryAfterMs?: number; ref?: string }): void {
    this.#out.error(code, message, id, extra);
  }

  /** Runs `authenticate` again on the token (server-side revocation check). */
  reauthenticate(): Promise<void> {
    return this.#session.reauthenticate();
  }

  /**
   * Called by the bridge's ticker: enforces the hello and refresh deadlines and token expiry,
   * closes a connection silent for five heartbeats (a 1.5 client answers every other ping or so,
   * an older one every ping), and pings one whose heartbeat is due. Pings
   * are due heartbeatMs after the connection's last one (the first at a random point of the
   * second half of the interval), so they spread over the interval instead of 10,000 going out
   * in one tick.
   */
  tick(now: number): void {
    this.#session.checkDeadlines(now);
    if (this.state === "new" || this.state === "closed") return;
    const heartbeatMs = this.context.options.heartbeatMs;
    if (now - this.#lastSeen > SERVER_SILENT_BEATS * heartbeatMs) this.close(CloseCode.Timeout, "no heartbeat");
    else if (now >= this.#nextPingAt) {
      this.#nextPingAt = now + heartbeatMs;
      this.#out.beat(PING);
    }
  }

  // ---- inbound ----

  onMessage(data: unknown): void {
    if (this.state === "closed") return;
    this.#lastSeen = this.context.clock.now();
    if (typeof data !== "string") {
      this.#out.protocolError(new ProtocolError("binary frames are not part of the protocol"));
      return;
    }
    const max = this.context.options.limits.maxFrameBytes;
    if (data.length > max || (data.length * 3 > max && utf8Length(data) > max)) {
      this.#out.refuse(ErrorCode.LimitExceeded, `frame over ${max} bytes`, CloseCode.FrameTooLarge, LimitName.FrameBytes);
      return;
    }
    // The frame a connection sends most, as the client writes it: no parse.
    if (data === PONG && this.#inFlight === 0 && this.state !== "new") return;
    let frame: ClientFrame;
    try {
      frame = parseClientFrame(data);
    } catch (err) {
      this.#out.protocolError(err as ProtocolError);
      return;
    }
    // A heartbeat with nothing queued before it is handled at once: no promise chain for the
    // frames a connection sends most.
    if (this.#inFlight === 0 && this.state !== "new" && (frame.type === "ping" || frame.type === "pong")) {
      if (frame.type === "ping") this.send(PONG);
      return;
    }
    // Frames wait their turn while an authorize call runs; a client that keeps sending
    // meanwhile must not queue without bound.
    if (++this.#inFlight > MAX_IN_FLIGHT) {
      this.#out.protocolError(new ProtocolError(`more than ${MAX_IN_FLIGHT} frames waiting to be handled`));
      return;
    }
    this.#queue = this.#queue
      .then(() => this.#handle(frame))
      .catch((err) => {
        this.context.log("error", "frame handling failed", { connection: this.id, error: String(err) });
        this.#out.error(ErrorCode.Internal, "internal error");
      })
      .finally(() => {
        if (--this.#inFlight === 0) this.#queue = IDLE; // drops the settled chain
      });
  }

  async #handle(frame: ClientFrame): Promise<void> {
    if (this.state === "closed") return;
    if (this.state === "new" && frame.type !== "hello") {
      this.#out.protocolError(new ProtocolError(`expected hello first, got ${frame.type}`));
      return;
    }
    switch (frame.type) {
      case "hello":
        return this.#session.hello(frame);
      case "subscribe":
        return this.#subscribe(frame);
      case "unsubscribe": {
        const sub = this.#sub(frame.id);
        if (sub) this.#remove(sub);
        this.send(encode({ type: "unsubscribed", id: frame.id }));
        return;
      }
      case "refresh":
        return this.#session.refresh(frame);
      case "mark_read":
        return markRead(this, frame, this.#sub(frame.id), (this.#markReadRate ??= new TokenBucket(this.context.options.limits.markReadRatePerSecond, Date.now())));
      case "ping":
        this.send(PONG);
        return;
      case "pong":
        return;
    }
  }

  // ---- subscriptions ----

  /** Authorizes every subscription again; refused ones end with `unsubscribed` FORBIDDEN. */
  async reauthorize(): Promise<void> {
    this.#session.rightsChanged();
    for (const sub of this.subs) {
      if (sub.stopped || this.state !== "open") continue;
      const allowed = grants(await this.#authorize(sub.topicName, sub.tenantId, sub.mode, sub.exposed), sub.tenantId);
      if (!allowed && !sub.stopped) this.endSubscription(sub, ErrorCode.Forbidden, "access to this subscription was revoked");
    }
    // A refresh that switched the principal: the read states followed are the new principal's.
    for (const sub of this.subs) {
      if (sub.readFollow && !sub.stopped && sub.readFollow.principalKey !== this.#session.principalKey) followRead(this, sub, this.#session.principalKey);
    }
  }

  /** Ends every subscription with `unsubscribed` and this code (the session's expiry, revocation). */
  endAll(code: ErrorCode, message: string): void {
    for (const sub of this.subs) this.endSubscription(sub, code, message);
  }

  /** `authorize`'s answer (false when it threw); `grants()` says what it allows. */
  async #authorize(topic: string, tenantId: string | undefined, mode: SubscribeFrame["mode"], exposed: ExposedTopic<P>): Promise<unknown> {
    try {
      return await exposed.authorize(this.principal as P, { topic, tenantId, mode });
    } catch (err) {
      this.context.log("warn", "authorize threw", { connection: this.id, topic, error: String(err) });
      return false;
    }
  }

  async #subscribe(frame: SubscribeFrame): Promise<void> {
    const { id, topic, tenantId, mode, cursor, initial } = frame;
    const refuse = (code: ErrorCode, message: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}) => {
      this.context.metrics.bump(this.context.metrics.rejected, extra.limit ?? code.toLowerCase());
      this.#out.error(code, message, id, extra);
    };
    if (this.state !== "open") return refuse(ErrorCode.Unauthorized, "the token expired: send refresh first");
    if (this.#sub(id)) return refuse(ErrorCode.InvalidArgument, `subscription id ${JSON.stringify(id)} is already in use`);
    const retryAfterMs = this.#subscribeRate.take(Date.now());
    if (retryAfterMs > 0) {
      return refuse(ErrorCode.LimitExceeded, "subscribing too fast", { limit: LimitName.SubscribeRate, retryAfterMs });
    }
    if ((this.#subs?.length ?? 0) >= this.context.options.limits.maxSubscriptions) {
      return refuse(ErrorCode.LimitExceeded, `more than ${this.context.options.limits.maxSubscriptions} subscriptions on one connection`, {
        limit: LimitName.Subscriptions,
      });
    }
    const exposed = this.context.options.topics.get(topic);
    if (!exposed || (exposed.modes && !exposed.modes.includes(mode))) {
      return refuse(ErrorCode.TopicNotFound, `topic ${JSON.stringify(topic)} is not exposed${exposed ? ` in ${mode} mode` : ""}`);
    }
    const refusal = subscribeRefusal(frame, this.#subs ?? []);
    if (refusal) return refuse(refusal.code, refusal.message);
    let answer: unknown = false;
    for (let epoch = -1; epoch !== this.#session.authEpoch && this.state === "open"; ) {
      epoch = this.#session.authEpoch;
      answer = await this.#authorize(topic, tenantId, mode, exposed);
    }
    if (this.state !== "open") return;
    if (!grants(answer, tenantId)) {
      this.context.log("info", "subscription forbidden", { connection: this.id, id, topic, tenantId, mode, principal: this.#session.principalKey });
      return refuse(ErrorCode.Forbidden, grantRefusal(answer, tenantId));
    }
    // A feed with no cursor may start before its tenant's last N events (or those since T),
    // read after authorize with the tenant filter; then it resumes from there like any cursor.
    let start = cursor;
    if (initial !== undefined && cursor === undefined) {
      try {
        start = await exposed.topic.cursorBefore({ tenantId, ...initial });
      } catch (err) {
        const p = toErrorPayload(err);
        return refuse(p.code, p.message);
      }
      if (this.state !== "open") return;
    }
    const sub = new Subscription<P>(this, this.context, { id, topicName: topic, tenantId, mode, exposed });
    if (this.#subs) this.#subs.push(sub);
    else this.#subs = [sub];
    this.context.metrics.subscriptions[mode]++;
    this.send(encode({ type: "subscribed", id, hub: sub.hubId, mode }));
    if (frame.read) followRead(this, sub, this.#session.principalKey);
    sub.start(start);
  }

  /** Ends a subscription from the server side with an `unsubscribed` frame. */
  endSubscription(sub: Subscription<P>, code: ErrorCode | undefined, message: string | undefined): void {
    if (!this.#subs?.includes(sub)) return;
    this.#remove(sub);
    this.send(encode({ type: "unsubscribed", id: sub.id, code, message }));
  }

  #remove(sub: Subscription<P>): void {
    const subs = this.#subs;
    const i = subs ? subs.indexOf(sub) : -1;
    if (i < 0) return;
    if (subs!.length === 1) this.#subs = undefined;
    else subs!.splice(i, 1);
    this.context.metrics.subscriptions[sub.mode]--;
    sub.stop();
  }

  // ---- closing ----

  /** Closes the socket and releases everything. Idempotent. */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.#cleanup();
    this.#out.closeSocket(code, reason);
  }

  /** The socket closed (either side). */
  onClose(): void {
    if (this.state !== "closed") this.#cleanup();
  }

  #cleanup(): void {
    this.#session.end();
    for (const sub of this.subs) this.#remove(sub);
    this.#out.checkDrained();
    if (this.context.connections.delete(this)) this.context.metrics.connections--;
  }
}
