/**
 * @internal What a connection keeps of its upgrade request after `hello`, for later
 * `authenticate` calls (refresh, reauthenticate): a Request holds an AbortSignal, a URL and all
 * headers, which add up at 10,000 sockets.
 */

/** Headers kept after `hello`. */
const KEPT_HEADERS = ["authorization", "cookie", "origin", "user-agent", "x-forwarded-for", "x-real-ip", "forwarded"];

/** The URL, then the kept headers' names and values in turn: one array, no object around it. */
export type KeptRequest = readonly string[];

export function keep(request: Request): KeptRequest {
  const kept = [request.url];
  for (const name of KEPT_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) kept.push(name, value);
  }
  return kept;
}

export function rebuild(kept: KeptRequest): Request {
  const headers = new Headers();
  for (let i = 1; i < kept.length; i += 2) headers.set(kept[i]!, kept[i + 1]!);
  return new Request(kept[0]!, { headers });
}
