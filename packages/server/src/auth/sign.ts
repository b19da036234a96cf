/**
 * Signs the tokens that `tokenAuthenticator` verifies, so an app's login route does not rewrite
 * the same `jose` code: `sub` (required), `tenants`, any other claims, `iat` and `exp`.
 */
import { SignJWT, type CryptoKey, type JWK, type JWTPayload, type KeyObject } from "jose";
import { InvalidArgumentError } from "@tidemark/shared";
import { checkedKey } from "./key.js";

/** The claims of a token; `sub` names the principal (`TokenPrincipal.id`). */
export interface TokenClaims extends JWTPayload {
  /** The user: a non-empty string. */
  sub: string;
  /** Tenants the token grants (`TokenPrincipal.tenants`). */
  tenants?: string[];
}

export interface SignTokenOptions {
  /**
   * Signing key: the HS256 secret `tokenAuthenticator` is given (string or bytes, at least 32
   * bytes), or an ES256 private key (CryptoKey, KeyObject, JWK) whose public key it is given.
   * Missing or empty: `InvalidArgumentError`.
   */
  key: string | Uint8Array | CryptoKey | KeyObject | JWK | undefined;
  /**
   * Lifetime: seconds, or a jose time span (`"15m"`, `"2h"`). The bridge ends the token's
   * subscriptions at `exp` unless the client refreshes. @default 3600 (one hour)
   */
  expiresIn?: number | string;
  /** Signing algorithm. @default "HS256" for a secret, "ES256" for a key */
  algorithm?: "HS256" | "ES256";
  /** `iss` claim (checked by `tokenAuthenticator({ issuer })`). */
  issuer?: string;
  /** `aud` claim (checked by `tokenAuthenticator({ audience })`). */
  audience?: string;
}

const DEFAULT_EXPIRES_IN_SEC = 3600;
const TIME_SPAN = /^\d+(\.\d+)?\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks|y|yr|yrs|year|years)$/i;

/**
 * Signs a JWT for `tokenAuthenticator` with the same key: `claims` plus `iat` and `exp`.
 * Bad input (no key, a short secret, an empty `sub`, a lifetime that is not positive) rejects
 * with `InvalidArgumentError` and signs nothing.
 *
 * @example
 * app.get("/token", async (c) => c.text(await signToken({ sub: user.id, tenants: user.tenants }, { key: process.env.TOKEN_SECRET, expiresIn: "15m" })));
 */
export async function signToken(claims: TokenClaims, options: SignTokenOptions): Promise<string> {
  const { secret, key } = checkedKey<CryptoKey | KeyObject | JWK>("signToken", options?.key);
  if (typeof claims?.sub !== "string" || claims.sub === "") {
    throw new InvalidArgumentError("signToken: `claims.sub` must be a non-empty string (tokenAuthenticator refuses any other)");
  }
  const expiresIn = options.expiresIn ?? DEFAULT_EXPIRES_IN_SEC;
  const valid = typeof expiresIn === "number" ? Number.isFinite(expiresIn) && expiresIn > 0 : TIME_SPAN.test(expiresIn.trim()) && parseFloat(expiresIn) > 0;
  if (!valid) throw new InvalidArgumentError(`signToken: \`expiresIn\` must be a positive number of seconds or a span such as "15m" (got ${JSON.stringify(expiresIn)})`);
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...claims })
    .setProtectedHeader({ alg: options.algorithm ?? (secret ? "HS256" : "ES256") })
    .setIssuedAt(now)
    // A number is seconds from now; jose resolves a span against `iat`.
    .setExpirationTime(typeof expiresIn === "number" ? now + Math.ceil(expiresIn) : expiresIn.trim());
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt.setAudience(options.audience);
  return jwt.sign(key);
}
