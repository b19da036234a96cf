/**
 * @internal The upgrade request as a `Request` built only when something reads it. A Request
 * (its Headers, URL and AbortSignal) costs tens of µs, which a reconnect storm of thousands of
 * upgrades pays in full although the usual hooks never look at it: the bridge's own checks read
 * the head through {@link headerOf} and {@link urlOf}, which do not build it; the `authenticate`
 * hook and an `origins` function get this object, and the first property they read builds the
 * real Request and forwards to it.
 */

/** What the server parsed of the request head: the request target and the (lowercase) headers. */
export interface RequestHead {
  /** The request target as sent: path and query. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

const HEAD = Symbol("tidemark.requestHead");
const INSPECT = Symbol.for("nodejs.util.inspect.custom");

type Lazy = Request & { [HEAD]?: RequestHead };

/** A header of the head as a built Request would give it (repeated values joined by ", "). */
function headValue(head: RequestHead, name: string): string | null {
  const value = head.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The Request the upgrade's hooks get: `http://` + Host + target, every header of the head. */
export function buildRequest(head: RequestHead): Request {
  const headers: [string, string][] = [];
  for (const name in head.headers) {
    const value = headValue(head, name);
    if (value !== null) headers.push([name, value]);
  }
  return new Request(urlOfHead(head), { headers });
}

function urlOfHead(head: RequestHead): string {
  return `http://${headValue(head, "host") ?? "localhost"}${head.target}`;
}

/** A Request of `head`, built on first use (see the file comment). */
export function lazyRequest(head: RequestHead): Request {
  let real: Request | undefined;
  const built = () => (real ??= buildRequest(head));
  // The target answers `instanceof Request`; util.inspect reads the target directly, not
  // through the traps, so it gets an inspect hook of its own.
  const target = Object.create(Request.prototype, {
    [INSPECT]: { configurable: true, value: (_depth: number, options: object, inspect: (v: unknown, o: object) => string) => inspect(built(), options) },
  }) as Request;
  return new Proxy(target, {
    get(_target, prop) {
      if (prop === HEAD) return head;
      const request = built();
      const value = Reflect.get(request, prop, request) as unknown;
      // Request's methods and getters check their receiver: call them on the real one.
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(request) : value;
    },
    has: (_target, prop) => prop === HEAD || Reflect.has(built(), prop),
    set: (_target, prop, value) => Reflect.set(built(), prop, value),
    ownKeys: () => Reflect.ownKeys(built()),
    getOwnPropertyDescriptor: (_target, prop) => Reflect.getOwnPropertyDescriptor(built(), prop),
  });
}

/** The head behind a lazy request, or undefined for any other Request. */
export function headOf(request: Request): RequestHead | undefined {
  return (request as Lazy)[HEAD];
}

/** A header of `request` (null when absent), without building a lazy one. */
export function headerOf(request: Request, name: string): string | null {
  const head = headOf(request);
  return head ? headValue(head, name) : request.headers.get(name);
}

/** The URL of `request`, without building a lazy one (not normalised as `Request.url` is). */
export function urlOf(request: Request): string {
  const head = headOf(request);
  return head ? urlOfHead(head) : request.url;
}
