/**
 * @internal The Origin check of the upgrade. An origin is scheme, host and port. Without an
 * `origins` option only same-origin requests to a loopback Host pass: the Host header is the
 * client's to choose, so "same origin as the Host" alone lets a DNS-rebinding page (Origin and
 * Host both `attacker.example:8080`, resolving to this server) through.
 */
import { InvalidArgumentError } from "@tidemark/shared";
import { headerOf, urlOf } from "./lazy-request.js";

/** `scheme://host[:port]` in canonical form (lowercase, default port dropped), or undefined. */
export function canonicalOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "[::1]";
}

/** The `origins` option of the bridge (documented on `BridgeOptions.origins`). */
export type AllowedOrigins = string[] | "*" | ((origin: string, request: Request) => boolean);

/** Reads the request through headerOf/urlOf: a lazy upgrade request is built only for a function. */
export type OriginCheck = (request: Request) => boolean;

/** Builds the check once from the `origins` option (a bad entry fails `createBridge`). */
export function originCheck(allow: AllowedOrigins | undefined): OriginCheck {
  if (allow === "*") return () => true;
  if (typeof allow === "function") {
    return (request) => {
      const origin = headerOf(request, "origin");
      return origin !== null && allow(origin, request);
    };
  }
  if (Array.isArray(allow)) {
    const allowed = new Set<string>();
    for (const entry of allow) {
      const canonical = canonicalOrigin(entry);
      const url = canonical ? new URL(entry) : undefined;
      // Only a bare origin: a path, query or credentials would never match a browser's Origin.
      if (!url || url.pathname !== "/" || url.search || url.hash || url.username) {
        throw new InvalidArgumentError(`origins: ${JSON.stringify(entry)} is not an origin (scheme://host[:port])`);
      }
      allowed.add(canonical!);
    }
    return (request) => {
      const origin = headerOf(request, "origin");
      if (origin === null) return false;
      const canonical = canonicalOrigin(origin);
      return canonical !== undefined && allowed.has(canonical);
    };
  }
  return (request) => {
    const origin = headerOf(request, "origin");
    if (origin === null) return true; // non-browser client: a browser always sends Origin on an upgrade
    const canonical = canonicalOrigin(origin);
    if (!canonical) return false;
    let self: URL;
    try {
      self = new URL(`${new URL(urlOf(request)).protocol}//${headerOf(request, "host") ?? ""}`);
    } catch {
      return false;
    }
    return isLoopbackHost(self.hostname) && canonical === self.origin;
  };
}
