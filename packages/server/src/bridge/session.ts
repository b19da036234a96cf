/**
 * @internal The authentication half of a connection, a part it owns: the connection's state
 * (state.ts: `new`, `open` with its principal and expiry, `expired`, `closed`), `hello`,
 * `refresh`, expiry and revocation, the per-principal and unauthenticated counts, and the
 * authorization epoch. It sees the connection only as a `SessionHost` (its id, sending through
 * its Outbound, and what it does with its subscriptions), so it can be driven on its own
 * (session.test.ts). Subscriptions live in Connection.
 */
import { CloseCode, ErrorCode, LimitName, PROTOCOL_REVISION, PROTOCOL_VERSION, ProtocolError, type HelloFrame, type RefreshFrame } from "@tidemark/shared";
import { encode } from "./frames.js";
import { keep, rebuild, type KeptRequest } from "./kept-request.js";
import type { Outbound } from "./outbound.js";
import type { BridgeContext } from "./context.js";
import { canMove, type ConnectionState, type StateKind } from "./state.js";
import type { WaitingPlace } from "./unauthenticated.js";

/**
 * @internal What a Session asks of its connection: its id, sending (the connection's Outbound),
 * and what it does with its subscriptions. One back-reference, not one per collaborator: every
 * field here is paid at every socket.
 */
export interface SessionHost extends Pick<Outbound, "send" | "refuse" | "protocolError"> {
  /** The connection's id (welcome, logs). */
  readonly id: string;
  /** Authorizes every subscription again (the principal or its rights changed). */
  reauthorize(): Promise<void>;
  /** Ends every subscription with `unsubscribed` and this code (expiry, revocation). */
  endAll(code: ErrorCode, message: string): void;
}

/** @internal What a Session uses of the bridge. */
export type SessionContext<P> = Pick<BridgeContext<P>, "options" | "metrics" | "principals" | "unauthenticated" | "log" | "warnOnce" | "clock">;

/** @internal */
export class Session<P> {
  readonly #context: SessionContext<P>;
  readonly #host: SessionHost;
  #state: ConnectionState<P>;
  /** The upgrade request until authenticated, then a light copy (a Request holds an AbortSignal and more). */
  #request: Request | KeptRequest;
  /** Its place among the unauthenticated sockets while counted there (`hello` not done yet). */
  #unauthenticated: WaitingPlace | undefined;
  /**
   * Bumped whenever the principal's rights may have changed (reauthorize, refresh, expiry): a
   * subscribe whose `authorize` started under an older epoch is authorized again before it is
   * added, so a revocation cannot be overtaken by a slow authorize that read the old rights.
   */
  #authEpoch = 0;
  /** The token to authenticate again with; before `hello`, the cookie's (if any). */
  #token: string | undefined;
  #principalKey: string | undefined;
  /** What the client is told of the principal (welcome, refreshed): see principal-id.ts. */
  #principalId: string | undefined;

  /** `counted` is set when the caller counted the socket in `context.unauthenticated`. */
  constructor(context: SessionContext<P>, host: SessionHost, request: Request, cookieToken: string | undefined, counted?: WaitingPlace) {
    this.#context = context;
    this.#host = host;
    this.#state = { kind: "new", deadline: context.clock.now() + context.options.limits.unauthenticatedTimeMs };
    this.#request = request;
    this.#unauthenticated = counted;
    this.#token = cookieToken;
  }

  /** Which state the connection is in. */
  get state(): StateKind {
    return this.#state.kind;
  }

  /** The authenticated principal while the connection is open. */
  get principal(): P | undefined {
    return this.#state.kind === "open" ? this.#state.principal : undefined;
  }

  /** Token expiry (ms) of the principal while the connection is open. */
  get expiresAt(): number | undefined {
    const state = this.#state;
    return state.kind === "open" ? state.expiresAt : undefined;
  }

  /** The key of the principal in the per-principal limit, once authenticated. */
  get principalKey(): string | undefined {
    return this.#principalKey;
  }

  /** The authorization epoch: a subscribe authorized under an older one is authorized again. */
  get authEpoch(): number {
    return this.#authEpoch;
  }

  /** The principal's rights may have changed (reauthorize): in-flight authorizations are stale. */
  rightsChanged(): void {
    this.#authEpoch++;
  }

  /** Moves to `next`: the only place the state changes. A transition the table does not list is a bug. */
  #setState(next: ConnectionState<P>): void {
    if (!canMove(this.#state.kind, next.kind)) throw new Error(`connection ${this.#host.id}: no transition from ${this.#state.kind} to ${next.kind}`);
    this.#state = next;
  }

  async #authenticate(token: string | undefined): Promise<P | undefined> {
    if (!token) return undefined;
    try {
      const r = this.#request;
      const request = r instanceof Request ? r : rebuild(r);
      return (await this.#context.options.authenticate(token, request)) ?? undefined;
    } catch (err) {
      this.#context.log("info", "authenticate threw", { connection: this.#host.id, error: String(err) });
      return undefined;
    }
  }

  async hello(frame: HelloFrame): Promise<void> {
    if (this.state !== "new") {
      this.#host.protocolError(new ProtocolError("hello was already sent"));
      return;
    }
    const token = frame.token ?? this.#token;
    const principal = await this.#authenticate(token);
    if (this.state !== "new") return;
    if (principal === undefined) {
      this.#context.metrics.bump(this.#context.metrics.rejected, "unauthorized");
      this.#host.refuse(ErrorCode.Unauthorized, token ? "authentication failed" : "no token in hello or cookie", CloseCode.Unauthorized);
      return;
    }
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    const id = await this.#context.principals.idOf(key);
    if (this.state !== "new") {
      this.#context.principals.release(key);
      return;
    }
    this.#principalKey = key;
    this.#principalId = id;
    this.#token = token;
    this.#setState({ kind: "open", principal, expiresAt: this.#context.options.expiresAt(principal) });
    this.#leaveUnauthenticated();
    if (this.#request instanceof Request) this.#request = keep(this.#request);
    const { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond } = this.#context.options.limits;
    this.#host.send(
      encode({
        type: "welcome",
        v: PROTOCOL_VERSION,
        connectionId: this.#host.id,
        heartbeatMs: this.#context.options.heartbeatMs,
        limits: { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond },
        expiresAt: this.expiresAt,
        principal: id,
        revision: PROTOCOL_REVISION,
      }),
    );
    this.#context.log("debug", "connection authenticated", { connection: this.#host.id, principal: key });
  }

  /**
   * Takes a slot of the per-principal limit for `principal` (hello, or a refresh or
   * reauthentication that changed the principal); on refusal closes the connection and
   * returns undefined.
   */
  #takePrincipalSlot(principal: P): string | undefined {
    const key = this.#context.options.principalKey(principal);
    if (key === undefined) {
      this.#context.warnOnce("no_principal_key", "a principal has neither a string id nor sub: set the principalKey option; its connections are refused");
      this.#context.metrics.bump(this.#context.metrics.rejected, "no_principal_key");
      this.#host.refuse(ErrorCode.Internal, "the server cannot identify this principal (no id or sub, and no principalKey option)", CloseCode.InternalError);
      return undefined;
    }
    if (key === this.#principalKey) return key;
    if (!this.#context.principals.acquire(key)) {
      this.#context.metrics.bump(this.#context.metrics.rejected, "connections_per_principal");
      this.#host.refuse(
        ErrorCode.LimitExceeded,
        `more than ${this.#context.options.limits.maxConnectionsPerPrincipal} connections for this principal`,
        CloseCode.TooManyConnections,
        LimitName.ConnectionsPerPrincipal,
      );
      return undefined;
    }
    return key;
  }

  async refresh(frame: RefreshFrame): Promise<void> {
    const principal = await this.#authenticate(frame.token);
    if (this.state === "closed") return;
    if (principal === undefined) {
      this.#revoke("the refreshed token was refused");
      return;
    }
    this.#token = frame.token;
    await this.#adopt(principal);
    if ((this.state as StateKind) === "closed") return;
    this.#host.send(encode({ type: "refreshed", expiresAt: this.expiresAt, principal: this.#principalId }));
  }

  /** Takes a (re)authenticated principal and authorizes every subscription again. */
  async #adopt(principal: P): Promise<void> {
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    if (key !== this.#principalKey) {
      const id = await this.#context.principals.idOf(key);
      if (this.state === "closed") {
        this.#context.principals.release(key);
        return;
      }
      this.#releasePrincipal();
      this.#principalKey = key;
      this.#principalId = id;
    }
    this.#authEpoch++;
    this.#setState({ kind: "open", principal, expiresAt: this.#context.options.expiresAt(principal) });
    await this.#host.reauthorize();
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
    this.#context.metrics.bump(this.#context.metrics.rejected, "revoked");
    this.#host.endAll(ErrorCode.Unauthorized, message);
    this.#host.refuse(ErrorCode.Unauthorized, message, CloseCode.Unauthorized);
  }

  /** The token expired: subscriptions end; the client has `unauthenticatedTimeMs` to refresh. */
  #expire(now: number): void {
    if (this.state !== "open") return;
    this.#host.endAll(ErrorCode.Unauthorized, "the token expired");
    this.#setState({ kind: "expired", deadline: now + this.#context.options.limits.unauthenticatedTimeMs });
    this.#authEpoch++;
    this.#context.log("info", "token expired", { connection: this.#host.id });
  }

  /** Enforces the hello and refresh deadlines and token expiry (from the bridge's ticker). */
  checkDeadlines(now: number): void {
    const state = this.#state;
    if ((state.kind === "new" || state.kind === "expired") && now > state.deadline) {
      this.#context.metrics.bump(this.#context.metrics.rejected, "unauthenticated_time");
      this.#host.refuse(
        ErrorCode.Unauthorized,
        state.kind === "new" ? "no valid hello in time" : "the token expired and was not refreshed in time",
        CloseCode.Timeout,
        LimitName.UnauthenticatedTime,
      );
    } else if (state.kind === "open" && state.expiresAt !== undefined && this.#context.clock.wallOf(now) >= state.expiresAt) {
      this.#expire(now);
    }
  }

  /** The connection closed: the state becomes `closed` and the bridge's counts are given back. */
  end(): void {
    this.#setState({ kind: "closed" });
    this.#releasePrincipal();
    this.#leaveUnauthenticated();
  }

  #releasePrincipal(): void {
    const key = this.#principalKey;
    if (key === undefined) return;
    this.#principalKey = undefined;
    this.#context.principals.release(key);
  }

  #leaveUnauthenticated(): void {
    if (!this.#unauthenticated) return;
    this.#context.unauthenticated.remove(this.#unauthenticated);
    this.#unauthenticated = undefined;
  }
}
