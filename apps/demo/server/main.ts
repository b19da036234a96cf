/**
 * The demo server: embedded NATS under TIDEMARK_DATA_DIR, the bridge on /ws, the demo routes,
 * and the built page, on PORT (default 3000). `pnpm --filter @tidemark/demo start`.
 */
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createNodeBridge, createSync, expose, serveBridge, type Durability, type LogLevel } from "@tidemark/server";
import { createDemoApp, type Note } from "./app.js";
import { DEMO_TOPIC, createDemoAuth, mayAccess, type Principal } from "./auth.js";
import { LOOPBACK_NAMES } from "./guards.js";

const port = Number(process.env.PORT ?? 3000);
const dataDir = resolve(process.env.TIDEMARK_DATA_DIR ?? ".tidemark");
// The retained window; the e2e gap test shrinks it to expire cursors on purpose.
const retentionBytes = Number(process.env.DEMO_RETENTION_BYTES ?? 16 * 1024 * 1024);
// Token lifetime (default one hour); e2e shortens it to watch the client refresh tokens in place.
const tokenTtlMs = process.env.DEMO_TOKEN_TTL_MS ? Number(process.env.DEMO_TOKEN_TTL_MS) : undefined;
// Signing secret: random per start (tokens of an earlier run are refused, and the client
// fetches a new one), unless DEMO_TOKEN_SECRET (at least 32 bytes) keeps it across restarts.
const auth = createDemoAuth({ secret: process.env.DEMO_TOKEN_SECRET || undefined, ttlMs: tokenTtlMs });
// Origins allowed to publish (and to open the socket): the demo's own, or DEMO_ORIGINS.
const origins = process.env.DEMO_ORIGINS
  ? process.env.DEMO_ORIGINS.split(",").map((o) => o.trim())
  : [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
// Names the demo answers to in Host: loopback, and the hosts of DEMO_ORIGINS (a public name).
const hosts = demoHosts(origins);
const logLevel = (process.env.DEMO_LOG_LEVEL ?? "warn") as LogLevel;
const distDir = relative(process.cwd(), fileURLToPath(new URL("../dist", import.meta.url))) || ".";

// The embedded server's durability: its default ("fsync" on nats-server 2.10+), or
// DEMO_DURABILITY=buffered (the browser benchmark, like the other benchmarks' servers).
const durability = parseDurability(process.env.DEMO_DURABILITY);

const sync = createSync({ namespace: "demo", embedded: { dataDir, durability } });
const topic = sync.topic<Note>({
  id: DEMO_TOPIC,
  retention: { maxAgeMs: 7 * 24 * 3600_000, maxBytes: retentionBytes },
  maxPayloadBytes: 2048,
});
// Start NATS and provision the topic before taking connections.
await sync.ready();
await topic.head();

const bridge = createNodeBridge<Principal>({
  topics: [expose(topic, (principal, { topic: name, tenantId }) => mayAccess(principal, name, tenantId))],
  authenticate: (token) => auth.authenticate(token),
  // The demo's principals are { user, tenants }: one principal per user, whatever its token's
  // expiry. It keys the per-principal limit, and the client keys saved history by it.
  principalKey: (principal) => principal.user,
  origins,
  sync,
  logLevel,
});
const app = createDemoApp({ topic, connections: () => bridge.connectionCount, distDir, bridge: bridge.app, auth, origins, hosts });
const server = await serveBridge(bridge, { app, port, hostname: "127.0.0.1" });
const nats = await sync.server();
console.log(`tidemark demo on ${server.url} (data in ${dataDir})`);
console.log(
  `nats-server ${nats.version} (${nats.embedded?.binary}), durability ${nats.embedded?.durability}: ` +
    (nats.embedded?.durability === "fsync" ? "fsync before every acknowledgement" : "a crash of the process loses nothing; a power failure may"),
);

function demoHosts(allowed: readonly string[]): string[] {
  const names = new Set<string>(LOOPBACK_NAMES);
  for (const origin of allowed) {
    try {
      names.add(new URL(origin).hostname.toLowerCase());
    } catch {
      throw new Error(`DEMO_ORIGINS: ${JSON.stringify(origin)} is not an origin (scheme://host[:port])`);
    }
  }
  return [...names];
}

function parseDurability(value: string | undefined): Durability | undefined {
  if (!value) return undefined;
  if (value === "fsync" || value === "buffered") return value;
  throw new Error(`DEMO_DURABILITY must be "fsync" or "buffered", not ${JSON.stringify(value)}`);
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.close();
  await sync.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
