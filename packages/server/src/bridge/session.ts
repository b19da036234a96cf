/**
 * @internal The authentication half of a connection: `hello`, `refresh`, expiry and
 * revocation, the per-principal and unauthenticated counts, and the authorization epoch.
 * Subscriptions live in Connection.
 */
import { CloseCode, ErrorCode, LimitName, PROTOCOL_VERSION, type HelloFrame, type RefreshFrame } from "@tidemark/shared";
import { defaultExpiresAt } from "./options.js";
import { encode, ProtocolError } from "./frames.js";
import { keep, rebuild, type KeptRequest } from "./kept-request.js";
import { Outbound, type State } from "./outbound.js";
import { principalKeyOf } from "./principals.js";
import { principalId } from "./principal-id.js";
import type { BridgeCore, BridgeSocket } from "./core.js";

export abstract class Session<P> extends Outbound<P> {
  principal: P | undefined;
  /** Deadline (ms) for `hello`, or for a `refresh` after the token expired. */
  deadline: number;
  expiresAt: number | undefined;
  /** The upgrade request until authenticated, then a light copy (a Request holds an AbortSignal and more). */
  #request: Request | KeptRequest;
  /** Remote address while counted among the unauthenticated sockets (`hello` not done yet). */
  #unauthenticated: { address: string | undefined } | undefined;
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

  /** `counted` is set when the caller counted the socket in `core.unauthenticated`. */
  constructor(core: BridgeCore<P>, socket: BridgeSocket, request: Request, cookieToken: string | undefined, counted?: { address: string | undefined }) {
    super(core, socket);
    this.#request = request;
    this.#unauthenticated = counted;
    this.#cookieToken = cookieToken;
    this.deadline = Date.now() + core.limits.unauthenticatedTimeMs;
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
      return (await this.core.options.authenticate(token, request)) ?? undefined;
    } catch (err) {
      this.core.log("info", "authenticate threw", { connection: this.id, error: String(err) });
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
      this.core.metrics.bump(this.core.metrics.rejected, "unauthorized");
      this.refuse(ErrorCode.Unauthorized, token ? "authentication failed" : "no token in hello or cookie", CloseCode.Unauthorized);
      return;
    }
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    const id = await principalId(key);
    if (this.state !== "new") {
      this.core.principals.release(key);
      return;
    }
    this.#principalKey = key;
    this.#principalId = id;
    this.#token = token;
    this.principal = principal;
    this.expiresAt = (this.core.options.expiresAt ?? defaultExpiresAt)(principal);
    this.state = "open";
    this.#leaveUnauthenticated();
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

  /**
   * Takes a slot of the per-principal limit for `principal` (hello, or a refresh or
   * reauthentication that changed the principal); on refusal closes the connection and
   * returns undefined.
   */
  #takePrincipalSlot(principal: P): string | undefined {
    const key = principalKeyOf(this.core.options, principal);
    if (key === undefined) {
      this.core.warnOnce("no_principal_key", "a principal has neither a string id nor sub: set the principalKey option; its connections are refused");
      this.core.metrics.bump(this.core.metrics.rejected, "no_principal_key");
      this.refuse(ErrorCode.Internal, "the server cannot identify this principal (no id or sub, and no principalKey option)", CloseCode.InternalError);
      return undefined;
    }
    if (key === this.#principalKey) return key;
    if (!this.core.principals.acquire(key)) {
      this.core.metrics.bump(this.core.metrics.rejected, "connections_per_principal");
      this.refuse(
        ErrorCode.LimitExceeded,
        `more than ${this.core.limits.maxConnectionsPerPrincipal} connections for this principal`,
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
    if ((this.state as State) === "closed") return;
    this.send(encode({ type: "refreshed", expiresAt: this.expiresAt, principal: this.#principalId }));
  }

  /** Takes a (re)authenticated principal and authorizes every subscription again. */
  async #adopt(principal: P): Promise<void> {
    const key = this.#takePrincipalSlot(principal);
    if (key === undefined) return;
    if (key !== this.#principalKey) {
      const id = await principalId(key);
      if (this.state === "closed") {
        this.core.principals.release(key);
        return;
      }
      this.#releasePrincipal();
      this.#principalKey = key;
      this.#principalId = id;
    }
    this.authEpoch++;
    this.principal = principal;
    this.expiresAt = (this.core.options.expiresAt ?? defaultExpiresAt)(principal);
    this.state = "open";
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
    this.core.metrics.bump(this.core.metrics.rejected, "revoked");
    this.endAll(ErrorCode.Unauthorized, message);
    this.refuse(ErrorCode.Unauthorized, message, CloseCode.Unauthorized);
  }

  /** The token expired: subscriptions end; the client has `unauthenticatedTimeMs` to refresh. */
  expire(now: number): void {
    if (this.state !== "open") return;
    this.endAll(ErrorCode.Unauthorized, "the token expired");
    this.state = "expired";
    this.authEpoch++;
    this.deadline = now + this.core.limits.unauthenticatedTimeMs;
    this.core.log("info", "token expired", { connection: this.id });
  }

  /** Called by the bridge's timer: enforces the hello and refresh deadlines and token expiry. */
  tick(now: number): void {
    if ((this.state === "new" || this.state === "expired") && now > this.deadline) {
      this.core.metrics.bump(this.core.metrics.rejected, "unauthenticated_time");
      this.refuse(
        ErrorCode.Unauthorized,
        this.state === "new" ? "no valid hello in time" : "the token expired and was not refreshed in time",
        CloseCode.Timeout,
        LimitName.UnauthenticatedTime,
      );
    } else if (this.state === "open" && this.expiresAt !== undefined && now >= this.expiresAt) {
      this.expire(now);
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
    this.core.principals.release(key);
  }

  #leaveUnauthenticated(): void {
    if (!this.#unauthenticated) return;
    this.core.unauthenticated.remove(this.#unauthenticated.address);
    this.#unauthenticated = undefined;
  }
}
