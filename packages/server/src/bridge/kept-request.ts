/**
 * @internal What a connection keeps of its upgrade request after `hello`, for later
 * `authenticate` calls (refresh, reauthenticate): a Request holds an AbortSignal, a URL and all
 * headers, which add up at 10,000 sockets.
 */

/** Headers kept after `hello`. */
const KEPT_HEADERS = ["authorization", "cookie", "origin", "user-agent", "x-forwarded-for", "x-real-ip", "forwarded"];

export interface KeptRequest {
  url: string;
  headers: string[];
}

export function keep(request: Request): KeptRequest {
  const headers: string[] = [];
  for (const name of KEPT_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.push(name, value);
  }
  return { url: request.url, headers };
}

export function rebuild(kept: KeptRequest): Request {
  const headers = new Headers();
  for (let i = 0; i < kept.headers.length; i += 2) headers.set(kept.headers[i]!, kept.headers[i + 1]!);
  return new Request(kept.url, { headers });
}
