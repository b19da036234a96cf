/**
 * The demo's identities and its one authorization rule. Two users share the browser profile:
 * `ada` belongs to the tenants `acme` and `globex`, not to `initech`; `bob` to `acme` and
 * `initech`. The signed-in user is the `demo_user` cookie (default `ada`). Tokens are HS256 JWTs signed here and verified with
 * the server's `tokenAuthenticator`; the bridge and the publish route share one verifier.
 */
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { tokenAuthenticator } from "@tidemark/server";

/** Who a demo token stands for. */
export interface Principal {
  user: string;
  tenants: readonly string[];
  /** Expiry of the token, ms since the epoch; the bridge ends the connection's access then. */
  expiresAt?: number;
}

export const DEMO_USERS: Readonly<Record<string, Principal>> = {
  ada: { user: "ada", tenants: ["acme", "globex"] },
  bob: { user: "bob", tenants: ["acme", "initech"] },
};
export const DEMO_USER: Principal = DEMO_USERS.ada!;
/** The cookie that says who is signed in (the page reads it and passes it to the client). */
export const USER_COOKIE = "demo_user";

/** The signed-in user of a request: its `demo_user` cookie, else ada. */
export function userOf(cookieHeader: string | undefined): Principal {
  const match = /(?:^|;\s*)demo_user=([^;]+)/.exec(cookieHeader ?? "");
  return (match && DEMO_USERS[decodeURIComponent(match[1]!)]) || DEMO_USER;
}
/** Tenants the tenant switcher offers; ada is refused the last one on purpose. */
export const DEMO_TENANTS = ["acme", "globex", "initech"] as const;
export const DEMO_TOPIC = "demo.notifications";
/** Lifetime of a token unless DEMO_TOKEN_TTL_MS says otherwise. */
export const DEFAULT_TOKEN_TTL_MS = 3600_000;

export interface DemoAuthOptions {
  /** HS256 secret, at least 32 bytes. @default 32 random bytes, new on every start */
  secret?: string;
  /** Token lifetime. @default {@link DEFAULT_TOKEN_TTL_MS} */
  ttlMs?: number;
}

export interface DemoAuth {
  /** Signs a token for `principal` (the demo's login). */
  issue(principal: Principal): Promise<{ token: string; expiresAt: number }>;
  /** Token -> principal, or undefined to refuse (bad signature, expired, malformed). */
  authenticate(token: string | undefined): Promise<Principal | undefined>;
}

/** The demo's token issuer and verifier, on one secret. */
export function createDemoAuth(options: DemoAuthOptions = {}): DemoAuth {
  const secret = new TextEncoder().encode(options.secret ?? randomBytes(32).toString("base64url"));
  const ttlMs = options.ttlMs ?? DEFAULT_TOKEN_TTL_MS;
  // Same process signs and verifies: no clock skew to tolerate, so `exp` means what it says.
  const verify = tokenAuthenticator<Principal>({
    key: secret,
    clockToleranceSec: 0,
    principal: (claims) => ({
      user: String(claims.sub),
      tenants: Array.isArray(claims.tenants) ? claims.tenants.filter((t): t is string => typeof t === "string") : [],
      ...(typeof claims.exp === "number" ? { expiresAt: claims.exp * 1000 } : {}),
    }),
  });
  return {
    async issue(principal) {
      // `exp` is in whole seconds: round up so a token lives at least `ttlMs`.
      const exp = Math.ceil((Date.now() + ttlMs) / 1000);
      const token = await new SignJWT({ tenants: [...principal.tenants] })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(principal.user)
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(secret);
      return { token, expiresAt: exp * 1000 };
    },
    authenticate: async (token) => (token ? verify(token) : undefined),
  };
}

/** The rule: a user sees (and publishes to) the tenants they belong to, on the demo topic only. */
export function mayAccess(principal: Principal, topic: string, tenantId: string | undefined): boolean {
  return topic === DEMO_TOPIC && tenantId !== undefined && principal.tenants.includes(tenantId);
}
