/**
 * @internal What a connection keeps of its upgrade request after `hello`, for later
 * `authenticate` calls (refresh, reauthenticate): a Request holds an AbortSignal, a URL and all
 * headers, which add up at 10,000 sockets.
 */
import { headerOf, urlOf } from "./lazy-request.js";

/** Headers kept after `hello`. */
const KEPT_HEADERS = ["authorization", "cookie", "origin", "user-agent", "x-forwarded-for", "x-real-ip", "forwarded"];

/** The URL, then the kept headers' names and values in turn: one array, no object around it. */
export type KeptRequest = readonly string[];

/**
 * Reads a lazy upgrade request's head without building it (lazy-request.ts); its URL is kept as
 * sent, and `rebuild` normalises it as the Request would have.
 */
export function keep(request: Request): KeptRequest {
  const kept = [urlOf(request)];
  for (const name of KEPT_HEADERS) {
    const value = headerOf(request, name);
    if (value !== null) kept.push(name, value);
  }
  // Pushing grew the array's store to 17 slots; a copy holds just its entries (about 70 bytes
  // less at every socket).
  return kept.slice();
}

export function rebuild(kept: KeptRequest): Request {
  const headers = new Headers();
  for (let i = 1; i < kept.length; i += 2) headers.set(kept[i]!, kept[i + 1]!);
  return new Request(kept[0]!, { headers });
}
