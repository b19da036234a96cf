/**
 * Checks of the demo's state-changing routes, each answering with its own status: a request
 * from another origin (403), one without a valid bearer token (401), one that is not JSON (415).
 * Together they stop a cross-site form or script from publishing into a signed-in user's feed.
 */
import type { Context, Env, MiddlewareHandler } from "hono";
import type { DemoAuth, Principal } from "./auth.js";

export type DemoEnv = { Variables: { principal: Principal } };

const refuse = <E extends Env>(c: Context<E>, status: 401 | 403 | 415, code: string, message: string) => c.json({ code, message }, status);

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
