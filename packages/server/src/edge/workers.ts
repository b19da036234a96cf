/**
 * @tidemark/server/edge/workers: the bridge on Cloudflare Workers. A Durable Object holds the
 * long-lived parts: the client WebSockets, the NATS connection (WebSocket, `wsconnect`) and the
 * hubs, so one object serves many clients with one hub per (topic, tenant). The Worker itself
 * only routes requests to the object (by default a single object named "bridge"; `shard` spreads
 * clients over several, one hub per (topic, tenant) per object). docs/edge.md has the design.
 *
 * @example
 * import { createSync } from "@tidemark/server/edge";
 * import { defineBridgeObject, routeToBridge } from "@tidemark/server/edge/workers";
 * export const TidemarkBridge = defineBridgeObject((env: Env) => {
 *   const sync = createSync({ nats: { servers: env.NATS_WS_URL } });
 *   return { sync, topics: [expose(sync.topic({ id: "notifications" }), authorize)], authenticate };
 * });
 * export default { fetch: (request: Request, env: Env) => routeToBridge(request, env.TIDEMARK_BRIDGE) };
 */
import { WSContext, defineWebSocketHelper, type WSEvents } from "hono/ws";
import { createBridge, type Bridge } from "../bridge/bridge.js";
import type { BridgeOptions } from "../bridge/options.js";

/** The server end of a Workers `WebSocketPair` (the members the bridge uses). */
interface WorkersWebSocket {
  accept(): void;
  send(data: string | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message" | "close" | "error", listener: (event: Event & { data?: unknown }) => void): void;
  readonly readyState: number;
  readonly protocol?: string;
}

/** The parts of a Durable Object namespace binding that routing needs. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

type WebSocketPairCtor = new () => { 0: WebSocket; 1: WorkersWebSocket };

/**
 * @internal Hono's `upgradeWebSocket` contract on Workers. Hono's own Workers adapter never
 * calls `onOpen` (a `WebSocketPair` end is open once accepted), and the bridge starts each
 * connection in `onOpen`: this one calls it right after `accept()`.
 */
export const upgradeWebSocket = defineWebSocketHelper(async (c, events) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return;
  const Pair = (globalThis as unknown as { WebSocketPair: WebSocketPairCtor }).WebSocketPair;
  const pair = new Pair();
  const server = pair[1];
  const ctx = new WSContext({
    send: (data) => server.send(data as string | ArrayBuffer),
    close: (code, reason) => server.close(code, reason),
    raw: server,
    get readyState() {
      return server.readyState as 0 | 1 | 2 | 3;
    },
    url: null,
    protocol: server.protocol ?? null,
  });
  server.addEventListener("message", (event) => events.onMessage?.(event as MessageEvent, ctx));
  server.addEventListener("close", (event) => {
    // Workers leave the close handshake to the script (before the compatibility flag
    // web_socket_auto_reply_to_close): without this reply a peer's close() hangs until its timeout.
    try {
      server.close(1000, "closed");
    } catch {
      // already closed
    }
    events.onClose?.(event as Parameters<NonNullable<WSEvents["onClose"]>>[0], ctx);
  });
  server.addEventListener("error", (event) => events.onError?.(event, ctx));
  server.accept();
  events.onOpen?.(new Event("open"), ctx);
  return new Response(null, { status: 101, webSocket: pair[0] } as ResponseInit);
});

/** `createBridge()` with the Workers WebSocket upgrade (for use inside a Durable Object). */
export function createWorkersBridge<P = unknown>(options: Omit<BridgeOptions<P>, "upgradeWebSocket">): Bridge {
  return createBridge<P>({ ...options, upgradeWebSocket });
}

/** What `setup` returns: the bridge's options (its `sync` included) and the object's idle policy. */
export interface BridgeObjectOptions<P> extends Omit<BridgeOptions<P>, "upgradeWebSocket"> {
  /**
   * With no client connected for this long, the object closes the bridge and the Sync (the NATS
   * connection, the hubs, the timers), so that the platform can evict it; the next request
   * builds them again. 0 keeps them while the object lives. @default 60000
   */
  idleShutdownMs?: number;
}

/** What a bridge object is built from, on its first request (and again after an idle shutdown). */
export type BridgeObjectSetup<P, Env> = (env: Env, state: unknown) => BridgeObjectOptions<P>;

/** A Durable Object class (`new (state, env)` with `fetch`). */
export interface BridgeObjectClass<Env> {
  new (state: unknown, env: Env): { fetch(request: Request): Promise<Response>; readonly bridge: Bridge | undefined };
}

/**
 * Defines the Durable Object class that holds the bridge: export it under the class name your
 * wrangler config binds. The bridge and its Sync (which `setup` creates) are built on the first
 * request and kept while clients are connected.
 */
export function defineBridgeObject<P = unknown, Env = unknown>(setup: BridgeObjectSetup<P, Env>): BridgeObjectClass<Env> {
  return class TidemarkBridgeObject {
    readonly #state: unknown;
    readonly #env: Env;
    #bridge: Bridge | undefined;
    #options: BridgeObjectOptions<P> | undefined;
    #idleTimer: ReturnType<typeof setInterval> | undefined;
    #idleSince = 0;

    constructor(state: unknown, env: Env) {
      this.#state = state;
      this.#env = env;
    }

    get bridge(): Bridge | undefined {
      return this.#bridge;
    }

    fetch(request: Request): Promise<Response> {
      if (!this.#bridge) {
        const options = setup(this.#env, this.#state);
        this.#options = options;
        this.#bridge = createWorkersBridge<P>(options);
        const idleMs = options.idleShutdownMs ?? 60_000;
        if (idleMs > 0) this.#idleTimer = setInterval(() => void this.#checkIdle(idleMs), Math.max(50, Math.min(idleMs / 4, 5_000)));
      }
      this.#idleSince = Date.now();
      return Promise.resolve(this.#bridge.app.fetch(request));
    }

    async #checkIdle(idleMs: number): Promise<void> {
      const bridge = this.#bridge;
      if (!bridge) return;
      if (bridge.connectionCount > 0) {
        this.#idleSince = Date.now();
        return;
      }
      if (Date.now() - this.#idleSince < idleMs) return;
      const sync = this.#options?.sync;
      clearInterval(this.#idleTimer);
      this.#idleTimer = undefined;
      this.#bridge = undefined;
      this.#options = undefined;
      await bridge.close();
      await sync?.close();
    }
  };
}

/** How `routeToBridge` picks the object of a request. */
export interface RouteOptions {
  /** Object name of a request. @default "bridge" (one object: one hub per (topic, tenant) in all) */
  shard?: (request: Request) => string;
}

/**
 * The Worker's part: forwards the request (WebSocket upgrades, `/healthz`, `/readyz`,
 * `/metrics`) to the bridge object. A Worker invocation cannot keep sockets or a NATS
 * connection between requests; the object can.
 */
export function routeToBridge(request: Request, namespace: DurableObjectNamespaceLike, options: RouteOptions = {}): Promise<Response> {
  const name = options.shard?.(request) ?? "bridge";
  return namespace.get(namespace.idFromName(name)).fetch(request);
}
