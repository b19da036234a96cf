/**
 * @internal The authentication half of a connection: `hello`, `refresh`, expiry and
 * revocation, the per-principal and unauthenticated counts, and the authorization epoch.
 * Subscriptions live in Connection.
 */
import { CloseCode, ErrorCode, LimitName, PROTOCOL_VERSION, ProtocolError, type HelloFrame, type RefreshFrame } from "@tidemark/shared";
import { encode } from "./frames.js";
import { keep, rebuild, type KeptRequest } from "./kept-request.js";
import { Outbound } from "./outbound.js";
import type { BridgeContext } from "./context.js";
import type { BridgeSocket } from "./socket.js";
import type { StateKind } from "./state.js";
import type { WaitingPlace } from "./unauthenticated.js";

export abstract class Session<P> extends Outbound<P> {
  /** The upgrade request until authenticated, then a light copy (a Request holds an AbortSignal and more). */
  #request: Request | KeptRequest;
  /** Its place among the unauthenticated sockets while counted there (`hello` not done yet). */
  #unauthenticated: WaitingPlace | undefined;
  /**
   * Bumped whenever the principal's rights may have changed (reauthorize, refresh, expiry): a
   * subscribe whose `authorize` started under an older epoch is authorized again before it is
   * added, so a revocation cannot be overtaken by a slow authorize that read the old rights.
   */
  protected authEpoch = 0;
  readonly #cookieToken: string | undefined;
  #token: string | undefined;
  #principalKey: string | undefined;
  /** What the client is told of the principal (welcome, refreshed): see principal-id.ts. */
  #principalId: string | undefined;

  /** `counted` is set when the caller counted the socket in `context.unauthenticated`. */
  constructor(context: BridgeContext<P>, socket: BridgeSocket, request: Request, cookieToken: string | undefined, counted?: WaitingPlace) {
    super(context, socket);
    this.#request = request;
    this.#unauthenticated = counted;
    this.#cookieToken = cookieToken;
  }

  /** Token expiry (ms) of the principal while the connection is open. */
  get expiresAt(): number | undefined {
    const state = this.current;
    return state.kind === "open" ? state.expiresAt : undefined;
  }

  /** The key of the principal in the per-principal limit, once authenticated. */
  get principalKey(): string | undefined {
    return this.#principalKey;
  }

  /** Authorizes every subscription again (after the principal or its rights changed). */
  abstract reauthorize(): Promise<void>;
  /** Ends every subscription with `unsubscribed` and this code. */
  protected abstract endAll(code: ErrorCode, message: string): void;

  async #authenticate(token: string | undefined): Promise<P | undefined> {
    if (!token) return undefined;
    try {
      const r = this.#request;
      const request = r instanceof Request ? r : rebuild(r);
      return (await this.context.options.authenticate(token, request)) ?? undefined;
    } catch (err) {
      this.context.log("info", "authenticate threw", { connection: this.id, error: String(err) });
      return undefined;
    }
  }

  protected async hello(frame: HelloFrame): Promise<void> {
    if (this.state !== "new") {
      this.protocolError(new ProtocolError("hello was already sent"));
      return;
    }
    const token = frame.token ?? this.#cookieToken;
    const principal = await this.#authenticate(token);
    if (this.state !== "new") return;
    if (principal === undefined) {
      this.context.metrics.bump(this.context.metrics.rejected, "unauthorized");
      this.refuse(ErrorCode.Unauthorized, token ? "authentication failed" : "no token in hello or cookie", CloseCode.Unauthorized);
      return;
    }
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    const id = await this.context.principals.idOf(key);
    if (this.state !== "new") {
      this.context.principals.release(key);
      return;
    }
    this.#principalKey = key;
    this.#principalId = id;
    this.#token = token;
    this.setState({ kind: "open", principal, expiresAt: this.context.options.expiresAt(principal) });
    this.#leaveUnauthenticated();
    if (this.#request instanceof Request) this.#request = keep(this.#request);
    const { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond } = this.context.options.limits;
    this.send(
      encode({
        type: "welcome",
        v: PROTOCOL_VERSION,
        connectionId: this.id,
        heartbeatMs: this.context.options.heartbeatMs,
        limits: { maxFrameBytes, maxSubscriptions, subscribeRatePerSecond },
        expiresAt: this.expiresAt,
        principal: id,
      }),
    );
    this.context.log("debug", "connection authenticated", { connection: this.id, principal: key });
  }

  /**
   * Takes a slot of the per-principal limit for `principal` (hello, or a refresh or
   * reauthentication that changed the principal); on refusal closes the connection and
   * returns undefined.
   */
  #takePrincipalSlot(principal: P): string | undefined {
    const key = this.context.options.principalKey(principal);
    if (key === undefined) {
      this.context.warnOnce("no_principal_key", "a principal has neither a string id nor sub: set the principalKey option; its connections are refused");
      this.context.metrics.bump(this.context.metrics.rejected, "no_principal_key");
      this.refuse(ErrorCode.Internal, "the server cannot identify this principal (no id or sub, and no principalKey option)", CloseCode.InternalError);
      return undefined;
    }
    if (key === this.#principalKey) return key;
    if (!this.context.principals.acquire(key)) {
      this.context.metrics.bump(this.context.metrics.rejected, "connections_per_principal");
      this.refuse(
        ErrorCode.LimitExceeded,
        `more than ${this.context.options.limits.maxConnectionsPerPrincipal} connections for this principal`,
        CloseCode.TooManyConnections,
        LimitName.ConnectionsPerPrincipal,
      );
      return undefined;
    }
    return key;
  }

  protected async refresh(frame: RefreshFrame): Promise<void> {
    const principal = await this.#authenticate(frame.token);
    if (this.state === "closed") return;
    if (principal === undefined) {
      this.#revoke("the refreshed token was refused");
      return;
    }
    this.#token = frame.token;
    await this.#adopt(principal);
    if ((this.state as StateKind) === "closed") return;
    this.send(encode({ type: "refreshed", expiresAt: this.expiresAt, principal: this.#principalId }));
  }

  /** Takes a (re)authenticated principal and authorizes every subscription again. */
  async #adopt(principal: P): Promise<void> {
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    if (key !== this.#principalKey) {
      const id = await this.context.principals.idOf(key);
      if (this.state === "closed") {
        this.context.principals.release(key);
        return;
      }
      this.#releasePrincipal();
      this.#principalKey = key;
      this.#principalId = id;
    }
    this.authEpoch++;
    this.setState({ kind: "open", principal, expiresAt: this.context.options.expiresAt(principal) });
    await this.reauthorize();
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
    this.context.metrics.bump(this.context.metrics.rejected, "revoked");
    this.endAll(ErrorCode.Unauthorized, message);
    this.refuse(ErrorCode.Unauthorized, message, CloseCode.Unauthorized);
  }

  /** The token expired: subscriptions end; the client has `unauthenticatedTimeMs` to refresh. */
  #expire(now: number): void {
    if (this.state !== "open") return;
    this.endAll(ErrorCode.Unauthorized, "the token expired");
    this.setState({ kind: "expired", deadline: now + this.context.options.limits.unauthenticatedTimeMs });
    this.authEpoch++;
    this.context.log("info", "token expired", { connection: this.id });
  }

  /** Enforces the hello and refresh deadlines and token expiry (from the bridge's ticker). */
  protected checkDeadlines(now: number): void {
    const state = this.current;
    if ((state.kind === "new" || state.kind === "expired") && now > state.deadline) {
      this.context.metrics.bump(this.context.metrics.rejected, "unauthenticated_time");
      this.refuse(
        ErrorCode.Unauthorized,
        state.kind === "new" ? "no valid hello in time" : "the token expired and was not refreshed in time",
        CloseCode.Timeout,
        LimitName.UnauthenticatedTime,
      );
    } else if (state.kind === "open" && state.expiresAt !== undefined && now >= state.expiresAt) {
      this.#expire(now);
    }
  }

  /** Gives back what the session holds in the bridge's counts (on close). */
  protected releaseSession(): void {
    this.#releasePrincipal();
    this.#leaveUnauthenticated();
  }

  #releasePrincipal(): void {
    const key = this.#principalKey;
    if (key === undefined) return;
    this.#principalKey = undefined;
    this.context.principals.release(key);
  }

  #leaveUnauthenticated(): void {
    if (!this.#unauthenticated) return;
    this.context.unauthenticated.remove(this.#unauthenticated);
    this.#unauthenticated = undefined;
  }
}
