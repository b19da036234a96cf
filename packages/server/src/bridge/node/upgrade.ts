/**
 * @internal The upgrade path of `serveBridge` when it serves the bridge's own app: a WebSocket
 * upgrade of the endpoint's path is checked and accepted without building a Hono `Request` or
 * running the app's router (a reconnect storm pays that once per socket). The checks are the
 * endpoint's own (ws-route.ts), on a request built only if a hook reads it (lazy-request.ts).
 * Anything this path does not recognise exactly goes through the app as before.
 */
import { parse as parseCookies } from "hono/utils/cookie";
import { lazyRequest } from "../lazy-request.js";
import { remoteAddressOf } from "../unauthenticated.js";
import type { WSEvents } from "hono/ws";
import type { Refusal, WsRoute } from "../ws-route.js";

/** What this reads of Node's `IncomingMessage` (headers are lowercase, as Node gives them). */
export interface UpgradeMessage {
  readonly url?: string;
  readonly method?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>> & { host?: string; upgrade?: string; cookie?: string };
  readonly socket: { readonly remoteAddress?: string };
}

/** Paths Hono's router matches only literally (no pattern syntax, nothing to decode). */
const LITERAL_PATH = /^\/[A-Za-z0-9/_.~-]*$/;
/** Hosts whose URL cannot carry credentials or anything a URL parser would rewrite. */
const PLAIN_HOST = /^[A-Za-z0-9.:[\]-]+$/;

/** The upgrade of `req` through `route`, or undefined when the app must answer it. */
export type DirectUpgrade = (req: UpgradeMessage) => WSEvents | Refusal | undefined;

export function directUpgrade(route: WsRoute): DirectUpgrade | undefined {
  const { cookieName } = route;
  if (!LITERAL_PATH.test(route.path)) return undefined;
  return (req) => {
    const target = req.url ?? "/";
    const query = target.indexOf("?");
    if ((query < 0 ? target : target.slice(0, query)) !== route.path || req.method !== "GET") return undefined;
    const { host, upgrade, cookie } = req.headers;
    if (upgrade?.toLowerCase() !== "websocket") return undefined;
    // The app's Request of this upgrade would not build (a bad port, say): the app answers (500).
    if (host === undefined || !PLAIN_HOST.test(host) || !URL.canParse(`http://${host}${target}`)) return undefined;
    const cookieToken = cookie ? parseCookies(cookie, cookieName)[cookieName] : undefined;
    return route.open(lazyRequest({ target, headers: req.headers }), remoteAddressOf({ incoming: req }), cookieToken);
  };
}
