/**
 * Checks of the demo's routes, each answering with its own status: a Host that is not one of the
 * demo's names (403, every route: DNS rebinding), a token request that is not the demo's own
 * page's (403), a request from another origin (403), one without a valid bearer token (401), one
 * that is not JSON (415). They stop other pages in the user's browser; a program that can reach
 * the port sets any header it likes (docs/client.md, "What the demo does not defend").
 */
import type { Context, Env, MiddlewareHandler } from "hono";
import type { DemoAuth, Principal } from "./auth.js";

export type DemoEnv = { Variables: { principal: Principal } };

/** Names of a loopback demo, always allowed in `Host`. */
export const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"] as const;

/** `Host` header -> its lower-case name without the port; undefined when it is not a plain host[:port]. */
export function hostName(host: string | undefined): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(host ?? "");
  return match ? match[1]!.toLowerCase() : undefined;
}

const refuse = <E extends Env>(c: Context<E>, status: 401 | 403 | 415, code: string, message: string) => c.json({ code, message }, status);

/**
 * The `Host` header must name the demo: one of `names` (lower case, no port). Under DNS
 * rebinding a page of another site reaches this server under the attacker's name, and every
 * other check (Origin, Sec-Fetch-Site, custom headers) then says "same origin": the Host is the
 * one thing that still names the attacker.
 */
export function ownHost<E extends Env>(names: readonly string[]): MiddlewareHandler<E> {
  const allowed = new Set(names.map((n) => n.toLowerCase()));
  return async (c, next) => {
    const host = c.req.header("host");
    const name = hostName(host);
    if (name === undefined || !allowed.has(name)) {
      return refuse(c, 403, "FORBIDDEN", `host ${JSON.stringify(host ?? null)} is not one of this demo's names (set DEMO_ORIGINS to serve it under another)`);
    }
    await next();
  };
}

/** The header the demo's page sends with its token requests (see {@link ownPage}). */
export const PAGE_HEADER = "x-tidemark-demo";

/**
 * A request of the demo's own page: it carries {@link PAGE_HEADER} (a page of another origin
 * cannot send a custom header without a CORS preflight, which the demo never answers), and a
 * browser's `Sec-Fetch-Site`, when sent, is `same-origin` (a page cannot set it).
 */
export function ownPage<E extends Env>(): MiddlewareHandler<E> {
  return async (c, next) => {
    const site = c.req.header("sec-fetch-site");
    if (c.req.header(PAGE_HEADER) === undefined || (site !== undefined && site !== "same-origin")) {
      return refuse(c, 403, "FORBIDDEN", `only the demo's own page may ask for a token (${PAGE_HEADER} header, same origin)`);
    }
    await next();
  };
}

/**
 * The `Origin` header must be one of `origins` (the demo's own). Browsers send it on every
 * POST; a request without one is refused too, since the allowed caller is the demo's page.
 */
export function sameOrigin<E extends Env>(origins: readonly string[]): MiddlewareHandler<E> {
  const allowed = new Set(origins);
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined || !allowed.has(origin)) {
      return refuse(c, 403, "FORBIDDEN", `origin ${JSON.stringify(origin ?? null)} may not call this route`);
    }
    await next();
  };
}

/** `Authorization: Bearer <token>`, verified by the same authenticator as the bridge. */
export function bearerAuth(auth: DemoAuth): MiddlewareHandler<DemoEnv> {
  return async (c, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(c.req.header("authorization") ?? "");
    const principal = match ? await auth.authenticate(match[1]) : undefined;
    if (!principal) return refuse(c, 401, "UNAUTHORIZED", "a valid token is required: Authorization: Bearer <token from /api/login>");
    c.set("principal", principal);
    await next();
  };
}

/** The body must be declared `application/json` (a form or `text/plain` post is refused). */
export function jsonOnly<E extends Env>(): MiddlewareHandler<E> {
  return async (c, next) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") return refuse(c, 415, "UNSUPPORTED_MEDIA_TYPE", "send the body as application/json");
    await next();
  };
}
