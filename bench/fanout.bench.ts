/**
 * Fan-out: the Tidemark bridge vs a raw `ws` broadcast of the same frames vs Socket.IO 4 with
 * connection-state recovery, at 2,000 and 10,000 connections over 100 tenants; then a resume
 * storm of 5,000 clients each 50 events behind, reconnecting at once to a restarted bridge.
 * Server, load generator and this orchestrator (the publisher) are separate processes; the
 * server runs the built packages (see fanout/procs.ts).
 *
 * Per configuration: connect half the clients, measure the server's memory, connect the rest,
 * measure again (memory per idle connection = the slope); then ROUNDS times a latency phase
 * (100 events/s for 2 s, publish-to-delivery measured at the client) and a burst phase (1,000
 * events published as fast as possible; deliveries/s until the last one arrived). Rates are
 * medians over the rounds, latency percentiles come from all rounds together.
 *
 *   pnpm bench fanout   (FANOUT_SIZES=2000,10000 FANOUT_IMPLS=ws,bridge,socketio FANOUT_ROUNDS=2
 *                        FANOUT_STORM=0 to skip the storm, FANOUT_DEBUG=1 for per-round lines)
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { connect } from "@nats-io/transport-node";
import { createSync } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { environment } from "./lib/table.js";
import { start, type Proc } from "./fanout/procs.js";
import { Histogram, NAMESPACE, TOPIC, now, subjectOf, tenantOf, type Impl, type Payload } from "./fanout/shared.js";

const TENANTS = 100;
const SIZES = (process.env.FANOUT_SIZES ?? "2000,10000").split(",").map(Number);
const IMPLS = (process.env.FANOUT_IMPLS ?? "ws,bridge,socketio").split(",") as Impl[];
const LATENCY_RATE = 100; // events/s during the latency phase
const LATENCY_SECONDS = 2;
const BURST = 1_000; // events published as fast as possible during the throughput phase
/** Latency and burst phases run this many times per configuration; rates are medians, latencies merged. */
const ROUNDS = Number(process.env.FANOUT_ROUNDS ?? 2);
const STORM_CLIENTS = 5_000;
const STORM_BEHIND = 50;
const title = "Your order #12345 has shipped and is on its way";

// The server processes run the BUILT packages, as an installed @tidemark/server would: tsx's
// keepNames transform would add a slow property array to every per-socket closure.
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
for (const pkg of ["shared", "server"]) {
  execFileSync(process.execPath, [tsc, "-p", `packages/${pkg}/tsconfig.build.json`], { stdio: "inherit" });
}

await using nats = await startBenchNats({ monitoring: true });
const sync = createSync({ namespace: NAMESPACE, nats: { servers: nats.url } });
const topic = sync.topic<Payload>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
await topic.head();
const nc = await connect({ servers: nats.url, name: "bench-publisher" });
const fakeCursor = topic.cursorAt(1_000_000);

async function consumers(): Promise<number> {
  const res = await fetch(new URL("/jsz?accounts=true&streams=true&consumers=true", nats.monitorUrl));
  const jsz = (await res.json()) as { account_details?: { stream_detail?: { name: string; consumer_detail?: unknown[] }[] }[] };
  let n = 0;
  for (const a of jsz.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name.includes(`_${NAMESPACE}_`)) n += s.consumer_detail?.length ?? 0;
  return n;
}

let seq = 0;
/** Publishes event `i` for its tenant the way `impl` receives events. */
function publish(impl: Impl, i: number): Promise<unknown> {
  const tenantId = tenantOf(i, TENANTS);
  const data: Payload = { t: now(), i, title };
  if (impl === "bridge") return topic.publish({ data, tenantId });
  // the baselines get an event of the same shape and size over core NATS
  const s = ++seq;
  nc.publish(subjectOf(tenantId), JSON.stringify({ eventId: `x-${s}`, cursor: fakeCursor, streamSequence: s, tenantId, data, publishedAt: Date.now() }));
  return Promise.resolve();
}

async function publishBurst(impl: Impl, count: number): Promise<void> {
  const inFlight = 256;
  for (let i = 0; i < count; i += inFlight) {
    await Promise.all(Array.from({ length: Math.min(inFlight, count - i) }, (_, k) => publish(impl, i + k)));
  }
  if (impl !== "bridge") await nc.flush();
}

interface Result {
  impl: Impl;
  n: number;
  connectMs: number;
  perConnRss: number;
  perConnHeap: number;
  consumers: number;
  p50: number;
  p99: number;
  latencyDelivered: number;
  latencyExpected: number;
  rate: number;
  burstDelivered: number;
  burstExpected: number;
}

async function run(load: Proc, impl: Impl, n: number): Promise<Result> {
  const server = start("./server.ts", [impl, nats.url], ["--expose-gc", ...(process.env.FANOUT_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.FANOUT_PROF}`] : [])], true);
  const ready = await server.wait<{ port: number; rss: number; heap: number }>("ready");
  // Memory per idle connection is the slope between half and all of the connections: the
  // fixed costs (one follower per tenant, code compiled on first use) fall out.
  const half = n / 2;
  const first = await load.ask<{ ms: number }>({ cmd: "connect", impl, port: ready.port, n: half, tenants: TENANTS }, "connected", 180_000);
  await new Promise((r) => setTimeout(r, 500));
  const memHalf = await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory");
  const second = await load.ask<{ ms: number }>(
    { cmd: "connect", impl, port: ready.port, n: n - half, tenants: TENANTS, offset: half },
    "connected",
    180_000,
  );
  const connectMs = first.ms + second.ms;
  await new Promise((r) => setTimeout(r, 500));
  const mem = await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory");
  const inUse = await consumers();
  const perTenant = n / TENANTS;

  const h = new Histogram();
  const rates: number[] = [];
  let latencyDelivered = 0;
  let burstDelivered = 0;
  const latencyExpected = ROUNDS * LATENCY_RATE * LATENCY_SECONDS * perTenant;
  const burstExpected = ROUNDS * BURST * perTenant;
  for (let round = 0; round < ROUNDS; round++) {
    // latency at a moderate, fixed rate
    const lat = load.ask<{ delivered: number; hist: [number, number][] }>(
      { cmd: "expect", count: LATENCY_RATE * LATENCY_SECONDS * perTenant, timeoutMs: 30_000 },
      "delivered",
      60_000,
    );
    await load.wait("expecting");
    const t0 = now();
    for (let i = 0; i < LATENCY_RATE * LATENCY_SECONDS; i++) {
      const due = t0 + (i * 1000) / LATENCY_RATE;
      const wait = due - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void publish(impl, i);
    }
    const latency = await lat;
    h.merge(Histogram.from(latency.hist));
    latencyDelivered += latency.delivered;

    // throughput: a burst published as fast as the publisher can, until every delivery arrived
    const burst = load.ask<{ delivered: number; firstAt: number; lastAt: number }>(
      { cmd: "expect", count: BURST * perTenant, timeoutMs: 60_000 },
      "delivered",
      90_000,
    );
    await load.wait("expecting");
    const b0 = now();
    await publishBurst(impl, BURST);
    const published = now();
    const result = await burst;
    burstDelivered += result.delivered;
    rates.push(result.delivered / ((result.lastAt - b0) / 1000));
    if (process.env.FANOUT_DEBUG) {
      console.error(
        `    ${impl} x ${n} round ${round + 1}: burst published in ${(published - b0).toFixed(0)} ms, first delivery at ${(result.firstAt - b0).toFixed(0)} ms, last at ${(result.lastAt - b0).toFixed(0)} ms`,
      );
    }
  }
  const rate = [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!;

  await load.ask({ cmd: "disconnect" }, "disconnected");
  await server.ask({ cmd: "stop" }, "stopped");
  return {
    impl,
    n,
    connectMs,
    perConnRss: (mem.rss - memHalf.rss) / (n - half),
    perConnHeap: (mem.heap - memHalf.heap) / (n - half),
    consumers: inUse,
    p50: h.quantile(0.5),
    p99: h.quantile(0.99),
    latencyDelivered,
    latencyExpected,
    rate,
    burstDelivered,
    burstExpected,
  };
}

async function storm(load: Proc) {
  const first = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
  const a = await first.wait<{ port: number }>("ready");
  await load.ask({ cmd: "connect", impl: "bridge", port: a.port, n: STORM_CLIENTS, tenants: TENANTS }, "connected", 120_000);
  await load.ask({ cmd: "disconnect", keep: true }, "disconnected");
  await first.ask({ cmd: "stop" }, "stopped");
  // while no bridge runs, every tenant gets 50 events: each client is 50 behind
  await publishBurst("bridge", STORM_BEHIND * TENANTS);
  const second = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
  const b = await second.wait<{ port: number }>("ready");
  let peak = 0;
  const sampler = setInterval(() => void consumers().then((c) => (peak = Math.max(peak, c))), 50);
  const resumed = await load.ask<{ ms: number; min: number; max: number; delivered: number; failed: number }>({ cmd: "resume", port: b.port }, "resumed", 120_000);
  clearInterval(sampler);
  const counts = await second.ask<{ follow: number; replay: number }>({ cmd: "counts" }, "counts");
  await load.ask({ cmd: "disconnect" }, "disconnected");
  await second.ask({ cmd: "stop" }, "stopped");
  return { ...resumed, ...counts, peak };
}

const load = start("./load.ts", []);
await load.wait("ready");
const results: Result[] = [];
for (const n of SIZES) {
  for (const impl of IMPLS) {
    const r = await run(load, impl, n);
    results.push(r);
    console.error(`  ${impl} x ${n}: ${Math.round(r.rate)} deliveries/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${(r.perConnRss / 1024).toFixed(1)} KB/conn`);
  }
}
const stormResult = IMPLS.includes("bridge") && process.env.FANOUT_STORM !== "0" ? await storm(load) : undefined;
await load.ask({ cmd: "close" }, "closed");
await nc.close();
await sync.close();

// ---- report ----
const get = (impl: Impl, n: number) => results.find((r) => r.impl === impl && r.n === n);
const fmt = (v: number | undefined, digits = 0) => (v === undefined || Number.isNaN(v) ? "-" : v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
console.log(`\n### Fan-out over ${TENANTS} tenants (${environment()})\n`);
console.log("| measure | connections | bridge | raw ws | Socket.IO 4 | bridge / ws | target |");
console.log("|:--|--:|--:|--:|--:|--:|:--|");
for (const n of SIZES) {
  const [b, w, s] = [get("bridge", n), get("ws", n), get("socketio", n)];
  const ratio = b && w ? b.rate / w.rate : undefined;
  const row = (name: string, f: (r: Result) => number, digits: number, target = "", showRatio = false) =>
    console.log(
      `| ${name} | ${n.toLocaleString("en-US")} | ${fmt(b && f(b), digits)} | ${fmt(w && f(w), digits)} | ${fmt(s && f(s), digits)} | ${showRatio ? fmt(ratio, 2) : ""} | ${target} |`,
    );
  row(`delivered events/s (burst, median of ${ROUNDS})`, (r) => r.rate, 0, ratio === undefined ? ">= 0.7x ws" : `>= 0.7x ws${ratio >= 0.7 ? " ok" : " MISSED"}, > Socket.IO${b && s ? (b.rate > s.rate ? " ok" : " MISSED") : ""}`, true);
  row("p50 publish-to-delivery, ms", (r) => r.p50, 2);
  row("p99 publish-to-delivery, ms", (r) => r.p99, 2, b && s ? `< Socket.IO${b.p99 < s.p99 ? " ok" : " MISSED"}` : "< Socket.IO");
  row("server memory per idle connection, KB (RSS)", (r) => r.perConnRss / 1024, 1, b ? `<= 12${b.perConnRss / 1024 <= 12 ? " ok" : " MISSED"}` : "<= 12");
  row("server heap per idle connection, KB", (r) => r.perConnHeap / 1024, 1);
  row("JetStream consumers in use", (r) => r.consumers, 0);
  row("connect + subscribe all, s", (r) => r.connectMs / 1000, 1);
  row("deliveries complete (latency, burst)", (r) => (r.latencyDelivered === r.latencyExpected && r.burstDelivered === r.burstExpected ? 1 : 0), 0);
}
console.log("\n(the last row is 1 when every expected delivery arrived in both phases)");
if (stormResult) {
  console.log(`\n### Resume storm: ${STORM_CLIENTS.toLocaleString("en-US")} clients, each ${STORM_BEHIND} events behind, reconnect at once to a restarted bridge\n`);
  console.log("| measure | value |");
  console.log("|:--|--:|");
  console.log(`| time until all caught up, s | ${(stormResult.ms / 1000).toFixed(2)} |`);
  console.log(`| events replayed per client (min / max) | ${stormResult.min} / ${stormResult.max} |`);
  console.log(`| subscriptions that failed | ${stormResult.failed} |`);
  console.log(`| frames delivered per second during the storm | ${Math.round((stormResult.min === stormResult.max ? stormResult.min * STORM_CLIENTS : stormResult.delivered) / (stormResult.ms / 1000)).toLocaleString("en-US")} |`);
  console.log(`| consumers created (follow + replay calls) | ${stormResult.follow + stormResult.replay} (${stormResult.follow} follow, ${stormResult.replay} replay) |`);
  console.log(`| peak JetStream consumers during the storm | ${stormResult.peak} |`);
}
