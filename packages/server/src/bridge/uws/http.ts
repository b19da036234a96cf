/**
 * @internal Plain HTTP on uWS through the app's `fetch` (health, readiness, metrics, an app's own
 * routes): a uWS request becomes a `Request`, the `Response` is written back. uWS's request is
 * valid only until its handler returns, so everything is read from it first; its response until
 * it is aborted, so writes check.
 */
import { STATUS_CODES } from "node:http";
import type { UwsRequest, UwsResponse } from "./types.js";

/** The parts of a uWS request that outlive its handler. */
export interface UwsRequestHead {
  method: string;
  /** Path and query, as sent. */
  target: string;
  /** Lowercase names, as uWS gives them. */
  headers: Record<string, string>;
  remoteAddress: string;
}

export function requestHead(res: UwsResponse, req: UwsRequest): UwsRequestHead {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  });
  const query = req.getQuery();
  return {
    method: req.getCaseSensitiveMethod?.() ?? req.getMethod().toUpperCase(),
    target: query ? `${req.getUrl()}?${query}` : req.getUrl(),
    headers,
    // As uWS writes it (IPv4 peers IPv6-mapped); the bridge reads it through remoteAddressOf,
    // which gives the IPv4 form, as it does for Node's sockets.
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
  };
}

export function toRequest(head: UwsRequestHead, body?: Uint8Array): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(head.headers)) headers.set(key, value);
  const hasBody = body !== undefined && head.method !== "GET" && head.method !== "HEAD";
  return new Request(`http://${head.headers.host ?? "localhost"}${head.target}`, { method: head.method, headers, body: hasBody ? (body as Uint8Array<ArrayBuffer>) : undefined });
}

/** Reads a request body (uWS hands it in chunks after the handler returned). */
export function readBody(res: UwsResponse, maxBytes: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      size += chunk.byteLength;
      if (size > maxBytes) return resolve(undefined);
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(Buffer.concat(chunks));
    });
  });
}

/** A status line uWS accepts ("404 Not Found"). */
export function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? ""}`;
}

/** A response with no body that closes the connection (a refused upgrade, an error). */
export function writeRefusal(res: UwsResponse, status: number, retryAfterSeconds?: number | string | null): void {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    if (retryAfterSeconds != null && /^\d+$/.test(String(retryAfterSeconds))) res.writeHeader("Retry-After", String(retryAfterSeconds));
    res.end("", true);
  });
}

/**
 * Writes `response` to `res` unless the client went away (`aborted()`). A body read in one chunk
 * goes out with a Content-Length; a longer one (a stream) in chunked encoding, one chunk behind
 * the reader so that its last chunk ends the response.
 */
export async function writeResponse(res: UwsResponse, response: Response, aborted: () => boolean): Promise<void> {
  let started = false;
  const head = () => {
    if (started) return;
    started = true;
    res.writeStatus(statusLine(response.status));
    // uWS writes Content-Length (end) or chunked encoding (write) itself.
    response.headers.forEach((value, key) => {
      if (key !== "content-length" && key !== "transfer-encoding") res.writeHeader(key, value);
    });
  };
  if (!response.body) {
    if (!aborted()) res.cork(() => (head(), res.end()));
    return;
  }
  const reader = response.body.getReader();
  let pending: Uint8Array | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (aborted()) return;
      const previous = pending;
      if (done) {
        res.cork(() => (head(), res.end(previous)));
        return;
      }
      pending = value;
      if (previous) res.cork(() => (head(), res.write(previous)));
    }
  } finally {
    if (aborted()) await reader.cancel().catch(() => undefined);
  }
}
