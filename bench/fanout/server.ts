/**
 * The server side of the fan-out benchmark, one process per run: the Tidemark bridge, a raw
 * `ws` broadcast, or Socket.IO 4 with connection-state recovery. The baselines receive the same
 * events from core NATS (`bench.fanout.<tenant>`) that the bridge reads from JetStream, and send
 * every subscriber of a tenant the same frame. Talks to the orchestrator over IPC.
 *
 *   node --expose-gc --conditions=@tidemark/source --import tsx bench/fanout/server.ts <impl> <natsUrl>
 */
import { createServer } from "node:http";
import { WebSocketServer, type WebSocket } from "./ws.js";
import { Server as SocketIOServer } from "socket.io";
import { connect } from "@nats-io/transport-node";
import { HubRegistry, createNodeBridge, createSync, serveBridge, type Topic } from "@tidemark/server";
import { NAMESPACE, TOPIC, type Impl } from "./shared.js";

const impl = process.argv[2] as Impl;
const natsUrl = process.argv[3]!;
const send = (msg: unknown) => process.send!(msg);
const gc = (globalThis as { gc?: () => void }).gc;

function memory() {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external + m.arrayBuffers };
}

let port = 0;
let close: () => Promise<void> = async () => undefined;
const counts = { follow: 0, replay: 0 };
/** The bridge's hub registry's catch-up counts (see hub/stats.ts). */
let hubStats: (() => unknown) | undefined;
/** The bridge's delivery-lag histogram (publish to send, seen by the server): cumulative counts by bucket. */
let lagBuckets: () => Record<string, number> = () => ({});

if (impl === "bridge") {
  const sync = createSync({ namespace: NAMESPACE, nats: { servers: natsUrl } });
  const real = sync.topic<unknown>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
  // Counts the readers the hubs open: each follow() or replay() is one JetStream consumer. The
  // hubs of this proxy live in a registry of their own so that they call the counting methods.
  // HUB_MODE=tenant|topic (the scale benchmark compares them); unset: the default.
  const hubMode = process.env.HUB_MODE as "topic" | "tenant" | undefined;
  const hubs = new HubRegistry(hubMode ? { hubMode } : {});
  hubStats = () => ({ ...hubs.stats });
  const topic: Topic<unknown> = new Proxy(real, {
    get(target, prop) {
      if (prop === "hub") return (o?: { tenantId?: string }) => hubs.get(topic, o?.tenantId);
      if (prop === "follow") return (o: Parameters<Topic["follow"]>[0]) => (counts.follow++, target.follow(o));
      if (prop === "replay") return (o: Parameters<Topic["replay"]>[0]) => (counts.replay++, target.replay(o));
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  await real.head();
  const bridge = createNodeBridge<{ id: string }>({
    topics: [{ topic, authorize: () => true }],
    authenticate: (token) => ({ id: token }),
    sync,
    origins: "*",
    logLevel: "warn",
    // Every load client comes from one loopback address, thousands at once in a reconnect storm:
    // the caps on sockets waiting for hello would measure themselves, not the bridge.
    // Likewise the time for hello: a loaded machine takes longer than 10 s to answer 50,000.
    limits: { maxConnectionsPerPrincipal: 1_000_000, subscribeRatePerSecond: 1_000, maxUnauthenticated: 1_000_000, maxUnauthenticatedPerAddress: 1_000_000, unauthenticatedTimeMs: 120_000 },
  });
  const server = await serveBridge(bridge, { port: 0, drainGraceMs: 0 });
  port = server.port;
  lagBuckets = () => {
    const out: Record<string, number> = {};
    for (const m of bridge.metrics().matchAll(/^tidemark_bridge_delivery_lag_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  };
  close = async () => {
    await server.close();
    await sync.close();
  };
} else {
  const nc = await connect({ servers: natsUrl, name: `bench-${impl}` });
  const http = createServer();
  let broadcast: (tenant: string, frame: string) => void;
  if (impl === "ws") {
    const byTenant = new Map<string, Set<WebSocket>>();
    const wss = new WebSocketServer({ server: http });
    wss.on("connection", (ws, req) => {
      // `?tenant=a&tenant=b`: one socket on several tenants (the scale-out benchmark's users).
      for (const tenant of new URL(req.url ?? "/", "http://x").searchParams.getAll("tenant")) {
        let set = byTenant.get(tenant);
        if (!set) byTenant.set(tenant, (set = new Set()));
        set.add(ws);
        ws.on("close", () => set.delete(ws));
        ws.send(JSON.stringify({ type: "subscribed", hub: tenant }));
      }
    });
    broadcast = (tenant, frame) => {
      for (const ws of byTenant.get(tenant) ?? []) ws.send(frame);
    };
    close = async () => {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    };
  } else {
    const io = new SocketIOServer(http, {
      transports: ["websocket"],
      connectionStateRecovery: { maxDisconnectionDuration: 120_000, skipMiddlewares: true },
    });
    io.on("connection", (socket) => {
      const tenant = String(socket.handshake.query.tenant ?? "");
      if (!socket.recovered) void socket.join(tenant);
      socket.emit("subscribed", tenant);
    });
    broadcast = (tenant, frame) => io.to(tenant).emit("event", frame);
    close = async () => {
      io.disconnectSockets(true);
      await io.close();
    };
  }
  const sub = nc.subscribe("bench.fanout.>");
  void (async () => {
    for await (const m of sub) {
      const tenant = m.subject.slice("bench.fanout.".length);
      // the same frame shape as the bridge's, built once per event
      broadcast(tenant, `{"type":"event","hub":${JSON.stringify(tenant)},"event":${m.string()}}`);
    }
  })();
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  port = (http.address() as { port: number }).port;
  const inner = close;
  close = async () => {
    await inner();
    http.close();
    await nc.close();
  };
}

// FANOUT_PROF_LATENCY: a CPU profile of the latency phases only, taken from inside (200 µs samples).
let profiler: import("node:inspector/promises").Session | undefined;
async function profile(file: string | undefined): Promise<string | undefined> {
  if (!file) {
    const { Session } = await import("node:inspector/promises");
    profiler = new Session();
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.setSamplingInterval", { interval: 200 });
    await profiler.post("Profiler.start");
    return undefined;
  }
  const { profile: taken } = await profiler!.post("Profiler.stop");
  profiler!.disconnect();
  profiler = undefined;
  const { writeFileSync } = await import("node:fs");
  writeFileSync(file, JSON.stringify(taken));
  return file;
}

// A command that throws ends this child with an unhandled rejection, which the parent reports.
process.on("message", (msg: { cmd: string }) => void onMessage(msg));

async function onMessage(msg: { cmd: string }): Promise<void> {
  if (msg.cmd === "memory") send({ cmd: "memory", ...memory() });
  else if (msg.cmd === "snapshot") {
    gc?.();
    const { writeHeapSnapshot } = await import("node:v8");
    send({ cmd: "snapshot", file: writeHeapSnapshot((msg as unknown as { file: string }).file) });
  } else if (msg.cmd === "profile") {
    send({ cmd: "profile", file: await profile((msg as unknown as { file?: string }).file) });
  } else if (msg.cmd === "lag") send({ cmd: "lag", buckets: lagBuckets() });
  else if (msg.cmd === "counts") send({ cmd: "counts", ...counts, stats: hubStats?.() });
  else if (msg.cmd === "stop") {
    await close();
    send({ cmd: "stopped" });
    process.exit(0);
  }
}
// The orchestrator is gone (crashed or killed): do not linger.
process.on("disconnect", () => process.exit(0));
send({ cmd: "ready", port, ...memory() });
