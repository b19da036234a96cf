/**
 * The demo's identity and its one authorization rule: the signed-in user belongs to the tenants
 * `acme` and `globex`, not to `initech`. The bridge and the publish route both ask it.
 */

/** Who the demo token stands for. */
export interface Principal {
  user: string;
  tenants: readonly string[];
}

export const DEMO_USER: Principal = { user: "ada", tenants: ["acme", "globex"] };
/** Tenants the tenant switcher offers; the last one is refused on purpose. */
export const DEMO_TENANTS = ["acme", "globex", "initech"] as const;
export const DEMO_TOPIC = "demo.notifications";

const TOKEN_PREFIX = "demo-token:";

/**
 * The token the page fetches from /api/token. A real app would sign it. With `ttlMs` it
 * carries its expiry, which the bridge enforces (the client refreshes it before then).
 */
export function tokenFor(principal: Principal, ttlMs?: number): string {
  return TOKEN_PREFIX + principal.user + (ttlMs ? `:${Date.now() + ttlMs}` : "");
}

/** Token -> principal (with `expiresAt` when the token has one), or undefined to refuse. */
export function authenticate(token: string | undefined): (Principal & { expiresAt?: number }) | undefined {
  if (!token?.startsWith(TOKEN_PREFIX)) return undefined;
  const [user, expires] = token.slice(TOKEN_PREFIX.length).split(":");
  if (user !== DEMO_USER.user) return undefined;
  if (expires === undefined) return DEMO_USER;
  const expiresAt = Number(expires);
  return Number.isFinite(expiresAt) && expiresAt > Date.now() ? { ...DEMO_USER, expiresAt } : undefined;
}

/** The rule: a user sees (and publishes to) the tenants they belong to, on the demo topic only. */
export function mayAccess(principal: Principal, topic: string, tenantId: string | undefined): boolean {
  return topic === DEMO_TOPIC && tenantId !== undefined && principal.tenants.includes(tenantId);
}
