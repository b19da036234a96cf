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

/** The proxy's target: the head, and the Request once built. */
interface Target {
  [HEAD]: RequestHead;
  real: Request | undefined;
}

const built = (target: Target): Request => (target.real ??= buildRequest(target[HEAD]));

// Targets answer `instanceof Request` for the Request class that is global when they are made
// (@hono/node-server installs a subclass of its own once it serves). util.inspect reads a
// proxy's target directly, not through the traps, so the targets' prototype has an inspect hook.
let protoOf: { owner: typeof Request; proto: object } | undefined;
function targetProto(): object {
  if (protoOf?.owner !== Request) {
    const proto = Object.create(Request.prototype, {
      [INSPECT]: {
        // `this` is the proxy or its target: either gives the head
        value(this: { [HEAD]: RequestHead }, _depth: number, options: object, inspect: (value: unknown, options: object) => string) {
          return inspect(buildRequest(this[HEAD]), options);
        },
      },
    }) as object;
    protoOf = { owner: Request, proto };
  }
  return protoOf.proto;
}

/** One handler for every lazy request (no closures per upgrade). */
const HANDLER: ProxyHandler<Target> = {
  get(target, prop) {
    if (prop === HEAD) return target[HEAD];
    const request = built(target);
    const value = Reflect.get(request, prop, request) as unknown;
    // Request's methods and getters check their receiver: call them on the real one.
    return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(request) : value;
  },
  has: (target, prop) => prop === HEAD || Reflect.has(built(target), prop),
  set: (target, prop, value) => Reflect.set(built(target), prop, value),
  ownKeys: (target) => Reflect.ownKeys(built(target)),
  getOwnPropertyDescriptor: (target, prop) => Reflect.getOwnPropertyDescriptor(built(target), prop),
  defineProperty: (target, prop, descriptor) => Reflect.defineProperty(built(target), prop, descriptor),
  deleteProperty: (target, prop) => Reflect.deleteProperty(built(target), prop),
};

/** A Request of `head`, built on first use (see the file comment). */
export function lazyRequest(head: RequestHead): Request {
  const target = Object.create(targetProto()) as Target;
  target[HEAD] = head;
  target.real = undefined;
  return new Proxy(target, HANDLER) as unknown as Request;
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
