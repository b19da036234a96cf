/**
 * Signed-token authentication for the bridge: `tokenAuthenticator()` returns an `authenticate`
 * function that verifies a JWT with `jose` (HS256 with a shared secret, ES256 with a public
 * key or a key set), enforces its expiry, and asks a revocation hook. The principal carries
 * `expiresAt`, which the bridge enforces on open connections; after revoking a token, call
 * `bridge.reauthenticate()` so that open connections holding it are closed.
 */
import { jwtVerify, type CryptoKey, type JWK, type JWTPayload, type JWTVerifyGetKey, type KeyObject } from "jose";
import { checkedKey } from "./key.js";

/** The principal made from a verified token by default. */
export interface TokenPrincipal {
  /** `sub` of the token (a non-empty string; any other `sub` refuses the token). */
  id: string;
  /** Tenants the token grants (`tenants` claim, a list of strings), else `[]`. */
  tenants: string[];
  /** Expiry in ms since the epoch (`exp` x 1000); the bridge ends subscriptions then. */
  expiresAt: number | undefined;
  /** Every verified claim. */
  claims: JWTPayload;
}

export interface TokenAuthenticatorOptions<P = TokenPrincipal> {
  /**
   * Verification key: a shared secret (string or bytes) for HS256, or a public key (CryptoKey,
   * KeyObject, JWK) or key-set getter (jose's `createRemoteJWKSet`/`createLocalJWKSet`) for ES256.
   * Missing or empty (an unset environment variable), or a secret under 32 bytes: an
   * `InvalidArgumentError` when `tokenAuthenticator()` is called (so `process.env.TOKEN_SECRET`
   * may be passed as it is: unset, the server does not start).
   */
  key: string | Uint8Array | CryptoKey | KeyObject | JWK | JWTVerifyGetKey | undefined;
  /** Accepted algorithms. @default ["HS256"] for a secret, ["ES256"] otherwise (never both: no algorithm confusion) */
  algorithms?: ("HS256" | "ES256")[];
  /** Required `iss`. */
  issuer?: string;
  /** Required `aud`. */
  audience?: string;
  /** Allowed clock skew, in seconds. @default 5 */
  clockToleranceSec?: number;
  /** Tokens without `exp` are refused unless this is true. @default false */
  allowNoExpiry?: boolean;
  /**
   * Revocation hook: return true to refuse the token (e.g. its `jti` or `sub` is on a deny list).
   * `request` is the one the bridge passed to `authenticate` (undefined when called without one).
   */
  isRevoked?: (claims: JWTPayload, request: Request | undefined) => boolean | Promise<boolean>;
  /** Builds the principal from verified claims (and the request, as for `isRevoked`). @default {@link TokenPrincipal} */
  principal?: (claims: JWTPayload, request: Request | undefined) => P;
}

function defaultPrincipal(claims: JWTPayload): TokenPrincipal {
  const tenants = Array.isArray(claims.tenants) ? claims.tenants.filter((t): t is string => typeof t === "string") : [];
  return { id: claims.sub as string, tenants, expiresAt: typeof claims.exp === "number" ? claims.exp * 1000 : undefined, claims };
}

/** What `tokenAuthenticator()` returns: the bridge's `authenticate(token, request)`. */
export type TokenAuthenticate<P = TokenPrincipal> = (token: string, request?: Request) => Promise<P | undefined>;

/**
 * Returns an `authenticate(token, request)` for `createBridge()` that accepts only valid signed
 * tokens. A refused token (bad signature, wrong algorithm, expired, revoked, missing or
 * non-string `sub`) yields `undefined`, which the bridge answers with `UNAUTHORIZED`. A missing
 * or short key throws `InvalidArgumentError` here, at start, rather than refusing every token.
 *
 * @example
 * const authenticate = tokenAuthenticator({ key: process.env.TOKEN_SECRET, isRevoked: (c) => denied.has(c.jti!) });
 * const bridge = createNodeBridge({ topics, authenticate });
 */
export function tokenAuthenticator<P = TokenPrincipal>(options: TokenAuthenticatorOptions<P>): TokenAuthenticate<P> {
  const { secret, key } = checkedKey("tokenAuthenticator", options?.key);
  const algorithms = options.algorithms ?? (secret ? ["HS256"] : ["ES256"]);
  const build = options.principal ?? (defaultPrincipal as unknown as (claims: JWTPayload, request: Request | undefined) => P);
  const verifyOptions = {
    algorithms,
    issuer: options.issuer,
    audience: options.audience,
    clockTolerance: options.clockToleranceSec ?? 5,
    requiredClaims: options.allowNoExpiry ? ["sub"] : ["sub", "exp"],
  };
  return async (token: string, request?: Request) => {
    try {
      const { payload } = typeof key === "function"
        ? await jwtVerify(token, key, verifyOptions)
        : await jwtVerify(token, key as Uint8Array | CryptoKey | KeyObject | JWK, verifyOptions);
      // `sub` names the principal: anything but a non-empty string (an object would become
      // "[object Object]", one principal for every such token) is a bad token.
      if (typeof payload.sub !== "string" || payload.sub === "") return undefined;
      if (options.isRevoked && (await options.isRevoked(payload, request))) return undefined;
      return build(payload, request);
    } catch {
      return undefined;
    }
  };
}
