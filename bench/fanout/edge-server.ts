/**
 * The fan-out benchmark's bridge on Deno or Bun (bundled by bench/edge.bench.ts): the same
 * topic, options and limits as `server.ts`'s bridge, over NATS by WebSocket (`wsconnect`).
 * Env: NATS_WS_URL. Prints `{"port":N}` once listening; `GET /bench/memory` answers the
 * runtime's memory figures (after a GC where the runtime offers one).
 */
import { createSync, type Bridge } from "@tidemark/server/edge";
import { NAMESPACE, TOPIC } from "./shared.js";

interface Memory {
  rss: number;
  heapUsed: number;
  external?: number;
}
declare const Deno:
  | {
      env: { get(name: string): string | undefined };
      memoryUsage(): Memory;
      serve(options: { port: number; hostname: string; onListen(addr: { port: number }): void }, handler: (r: Request) => Response | Promise<Response>): unknown;
    }
  | undefined;
declare const Bun:
  | {
      env: Record<string, string | undefined>;
      gc(force: boolean): void;
      serve(options: { port: number; hostname: string; fetch: (r: Request, server: unknown) => Response | Promise<Response>; websocket: unknown }): { port: number };
    }
  | undefined;

const onDeno = typeof Deno !== "undefined";
const natsUrl = onDeno ? Deno!.env.get("NATS_WS_URL") : Bun!.env.NATS_WS_URL;
const sync = createSync({ namespace: NAMESPACE, nats: { servers: natsUrl! } });
const topic = sync.topic<unknown>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
await topic.head();
const options = {
  topics: [{ topic, authorize: () => true }],
  authenticate: (token: string) => ({ id: token }),
  sync,
  origins: "*" as const,
  logLevel: "warn" as const,
  // Every load client comes from one loopback address, thousands at once in a reconnect storm:
  // the caps on sockets waiting for hello would measure themselves, not the bridge.
  limits: { maxConnectionsPerPrincipal: 1_000_000, subscribeRatePerSecond: 1_000, maxUnauthenticated: 1_000_000, maxUnauthenticatedPerAddress: 1_000_000 },
};

function memory(): { rss: number; heap: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  if (!onDeno) Bun!.gc(true);
  const m: Memory = onDeno ? Deno!.memoryUsage() : (globalThis as unknown as { process: { memoryUsage(): Memory } }).process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + (m.external ?? 0) };
}

let bridge: Bridge;
const fetch = (request: Request, server?: unknown) =>
  new URL(request.url).pathname === "/bench/memory" ? Response.json(memory()) : bridge.app.fetch(request, server);
// Imported lazily: each runtime adapter of hono reads its runtime's globals when loaded.
if (onDeno) {
  const { createDenoBridge } = await import("@tidemark/server/edge/deno");
  bridge = createDenoBridge(options);
  Deno!.serve({ port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(JSON.stringify({ port })) }, (r) => fetch(r));
} else {
  const { createBunBridge } = await import("@tidemark/server/edge/bun");
  const made = createBunBridge(options);
  bridge = made.bridge;
  const server = Bun!.serve({ port: 0, hostname: "127.0.0.1", fetch, websocket: made.websocket });
  console.log(JSON.stringify({ port: server.port }));
}
