/**
 * Scale (issue 14): many online tenants on one bridge process, one connection per tenant. Per
 * hub mode ("topic": one whole-topic consumer per topic; "tenant": one per online tenant) and
 * size: JetStream consumers, nats-server RSS, bridge RSS per connection, time to connect and
 * subscribe all, p99 publish-to-delivery at a low per-tenant rate, and a resume storm after a
 * bridge restart (every client one event behind). The load generator and the bridge are child
 * processes (bench/fanout/load.ts and server.ts), all on loopback.
 *
 *   pnpm bench scale   (SCALE_SIZES=10000 SCALE_MODES=topic,tenant SCALE_RATE=200 SCALE_SECONDS=5 SCALE_STORM_EVENTS=1)
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { createSync } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { monitorJson, namespaceConsumers } from "./lib/monitor.js";
import { environment } from "./lib/table.js";
import { start, type Proc } from "./fanout/procs.js";
import { Histogram, NAMESPACE, TOPIC, now, tenantOf, type Payload } from "./fanout/shared.js";

const SIZES = (process.env.SCALE_SIZES ?? "10000").split(",").map(Number);
const MODES = (process.env.SCALE_MODES ?? "topic,tenant").split(",") as ("topic" | "tenant")[];
const RATE = Number(process.env.SCALE_RATE ?? 200); // events/s over all tenants during the latency phase
const SECONDS = Number(process.env.SCALE_SECONDS ?? 5);
/** Events per tenant published while the bridge is down (the resume storm's distance behind). */
const STORM_EVENTS = Number(process.env.SCALE_STORM_EVENTS ?? 1);
const title = "Your order #12345 has shipped and is on its way";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
for (const pkg of ["shared", "server"]) {
  execFileSync(process.execPath, [tsc, "-p", `packages/${pkg}/tsconfig.build.json`], { stdio: "inherit" });
}

await using nats = await startBenchNats({ monitoring: true });
const sync = createSync({ namespace: NAMESPACE, nats: { servers: nats.url } });
const topic = sync.topic<Payload>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
await topic.head();

const monitor = <T>(path: string) => monitorJson<T>(nats.monitorUrl, path);
const consumers = () => namespaceConsumers(nats.monitorUrl, NAMESPACE);
/** Listen-queue overflows so far (TcpExt ListenOverflows, the whole network namespace: other work counts too). */
function listenOverflows(): number {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n").filter((l) => l.startsWith("TcpExt:"));
    const [names, values] = lines.map((l) => l.split(/\s+/));
    return Number(values?.[names?.indexOf("ListenOverflows") ?? -1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}
const natsRss = async () => (await monitor<{ mem: number }>("/varz")).mem;
const apiErrors = async () => (await monitor<{ api: { errors: number } }>("/jsz")).api.errors;

/** Publishes `count` events to tenants spread over all `n` (a prime stride), `inFlight` at a time. */
async function publishSpread(n: number, count: number, offset = 0): Promise<void> {
  const inFlight = 256;
  for (let i = 0; i < count; i += inFlight) {
    const batch = Array.from({ length: Math.min(inFlight, count - i) }, (_, k) => {
      const j = offset + i + k;
      return topic.publish({ data: { t: now(), i: j, title }, tenantId: tenantOf(j * 7919, n) });
    });
    await Promise.all(batch);
  }
}

interface Result {
  mode: string;
  n: number;
  connectMs: number;
  perConnRss: number;
  consumers: number;
  natsRss: number;
  p50: number;
  p99: number;
  delivered: number;
  expected: number;
  storm: { ms: number; failed: number; delivered: number; apiErrors: number; peak: number; follow: number; replay: number; load: number; overflows: number; lastOpen: number; stats?: Stats };
}

/** The bridge's catch-up counts (packages/server/src/hub/stats.ts). */
interface Stats {
  covered: number;
  coverReads: number;
  coverEvents: number;
  coverMs: number;
  coverFailures: Record<string, number>;
  fallbacks: Record<string, number>;
  subscriberReplays: number;
  feeds: number;
  firstCaughtUpAt: number;
  lastCaughtUpAt: number;
}

async function run(load: Proc, mode: "topic" | "tenant", n: number): Promise<Result> {
  process.env.HUB_MODE = mode;
  const server = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
  const ready = await server.wait<{ port: number }>("ready");
  const half = Math.floor(n / 2);
  const timeout = 600_000;
  const first = await load.ask<{ ms: number }>({ cmd: "connect", impl: "bridge", port: ready.port, n: half, tenants: n }, "connected", timeout);
  await new Promise((r) => setTimeout(r, 500));
  const memHalf = await server.ask<{ rss: number }>({ cmd: "memory" }, "memory");
  const second = await load.ask<{ ms: number }>({ cmd: "connect", impl: "bridge", port: ready.port, n: n - half, tenants: n, offset: half }, "connected", timeout);
  await new Promise((r) => setTimeout(r, 1_000));
  const mem = await server.ask<{ rss: number }>({ cmd: "memory" }, "memory");
  const inUse = await consumers();
  const brokerRss = await natsRss();

  // latency at a low per-tenant rate: RATE events/s over all tenants, one client each
  const expected = RATE * SECONDS;
  const lat = load.ask<{ delivered: number; hist: [number, number][] }>({ cmd: "expect", count: expected, timeoutMs: 60_000 }, "delivered", 90_000);
  await load.wait("expecting");
  const t0 = now();
  for (let i = 0; i < expected; i++) {
    const wait = t0 + (i * 1000) / RATE - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    void topic.publish({ data: { t: now(), i, title }, tenantId: tenantOf(i * 7919, n) });
  }
  const latency = await lat;
  const h = Histogram.from(latency.hist);

  // resume storm: the bridge restarts; meanwhile every tenant gets one event
  await load.ask({ cmd: "disconnect", keep: true }, "disconnected");
  await server.ask({ cmd: "stop" }, "stopped");
  await publishSpread(n, n * STORM_EVENTS, expected);
  const again = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
  const b = await again.wait<{ port: number }>("ready");
  const errorsBefore = await apiErrors();
  let peak = 0;
  const sampler = setInterval(() => void consumers().then((c) => (peak = Math.max(peak, c)), () => undefined), 100);
  const overflowsBefore = listenOverflows();
  const resumed = await load.ask<{ ms: number; delivered: number; failed: number; lastOpen: number }>({ cmd: "resume", port: b.port }, "resumed", timeout);
  const overflows = listenOverflows() - overflowsBefore;
  clearInterval(sampler);
  const errors = (await apiErrors()) - errorsBefore;
  const counts = await again.ask<{ follow: number; replay: number; stats?: Stats }>({ cmd: "counts" }, "counts");
  const load1 = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  if (counts.stats) console.error(`  ${mode} x ${n} storm counts: ${JSON.stringify(counts.stats)}`);
  await load.ask({ cmd: "disconnect" }, "disconnected");
  await again.ask({ cmd: "stop" }, "stopped");
  return {
    mode,
    n,
    connectMs: first.ms + second.ms,
    perConnRss: (mem.rss - memHalf.rss) / (n - half),
    consumers: inUse,
    natsRss: brokerRss,
    p50: h.quantile(0.5),
    p99: h.quantile(0.99),
    delivered: latency.delivered,
    expected,
    storm: { ms: resumed.ms, failed: resumed.failed, delivered: resumed.delivered, apiErrors: errors, peak, load: load1, overflows, lastOpen: resumed.lastOpen, ...counts },
  };
}

const load = start("./load.ts", []);
await load.wait("ready");
const results: Result[] = [];
for (const n of SIZES) {
  for (const mode of MODES) {
    const r = await run(load, mode, n);
    results.push(r);
    console.error(`  ${mode} x ${n}: ${r.consumers} consumers, connect ${(r.connectMs / 1000).toFixed(1)} s, p99 ${r.p99.toFixed(2)} ms, storm ${(r.storm.ms / 1000).toFixed(1)} s`);
  }
}
await load.ask({ cmd: "close" }, "closed");
await sync.close();

const fmt = (v: number, digits = 0) => (Number.isNaN(v) ? "-" : v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
console.log(`\n### Scale: one connection per tenant on one bridge process (${environment()})\n`);
console.log(`| measure | ${results.map((r) => `${r.mode} x ${r.n.toLocaleString("en-US")}`).join(" | ")} |`);
console.log(`|:--|${results.map(() => "--:").join("|")}|`);
const row = (name: string, f: (r: Result) => string) => console.log(`| ${name} | ${results.map(f).join(" | ")} |`);
row("JetStream consumers (steady state)", (r) => fmt(r.consumers));
row("nats-server RSS, MiB", (r) => fmt(r.natsRss / 1024 ** 2, 0));
row("bridge RSS per connection, KB", (r) => fmt(r.perConnRss / 1024, 1));
row("connect + subscribe all, s", (r) => fmt(r.connectMs / 1000, 1));
row(`p50 publish-to-delivery at ${RATE} events/s over all tenants, ms`, (r) => fmt(r.p50, 2));
row(`p99 publish-to-delivery, ms`, (r) => fmt(r.p99, 2));
row("deliveries (got / expected)", (r) => `${r.delivered} / ${r.expected}`);
row("resume storm: all caught up after, s (target < 30)", (r) => `${fmt(r.storm.ms / 1000, 1)} ${r.storm.ms < 30_000 && r.storm.failed === 0 && r.storm.apiErrors === 0 ? "ok" : "MISSED"}`);
row("resume storm: last socket open after, s", (r) => fmt(r.storm.lastOpen / 1000, 1));
row("resume storm: listen queue overflows (dropped handshakes, machine-wide)", (r) => fmt(r.storm.overflows));
row(`resume storm: events delivered (${STORM_EVENTS} per tenant expected)`, (r) => fmt(r.storm.delivered));
row("resume storm: subscriptions failed", (r) => fmt(r.storm.failed));
row("resume storm: JetStream API errors", (r) => fmt(r.storm.apiErrors));
row("resume storm: peak consumers", (r) => fmt(r.storm.peak));
row("resume storm: follow / replay calls", (r) => `${r.storm.follow} / ${r.storm.replay}`);
row("resume storm: load average (1 min) at the end", (r) => fmt(r.storm.load, 1));
const st = (r: Result, f: (s: Stats) => string) => (r.storm.stats ? f(r.storm.stats) : "-");
const reasons = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k}: ${v}`).join("; ") || "none";
row("resume storm: followers caught up from the feed's backlog", (r) => st(r, (s) => fmt(s.covered)));
row("resume storm: backlog cover reads (events read, s)", (r) => st(r, (s) => `${fmt(s.coverReads)} (${fmt(s.coverEvents)}, ${fmt(s.coverMs / 1000, 1)})`));
row("resume storm: followers caught up between first and last, s", (r) => st(r, (s) => fmt((s.lastCaughtUpAt - s.firstCaughtUpAt) / 1000, 1)));
row("resume storm: cover read failures", (r) => st(r, (s) => reasons(s.coverFailures)));
row("resume storm: follower replays of their own, by reason", (r) => st(r, (s) => reasons(s.fallbacks)));
row("resume storm: subscriber replays (behind the ring) / feeds started", (r) => st(r, (s) => `${fmt(s.subscriberReplays)} / ${fmt(s.feeds)}`));
