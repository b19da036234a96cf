/**
 * Fan-out: the Tidemark bridge vs a raw `ws` broadcast of the same frames vs Socket.IO 4 with
 * connection-state recovery, at 2,000 and 10,000 connections over 100 tenants; then a resume
 * storm of 5,000 clients each 50 events behind, reconnecting at once to a restarted bridge,
 * and then (its floor) to a raw `ws` server that sends the same frames from memory.
 * Server, load generators (FANOUT_LOADGENS processes, 2 by default) and this orchestrator (the
 * publisher) are separate processes; the server runs the built packages (see fanout/procs.ts).
 * Each phase samples every process's CPU time and names the one that limited it (fanout/cpu.ts).
 *
 * Per configuration: connect half the clients, measure the server's memory, connect the rest in
 * MEMORY_STEPS steps measuring after each (memory per idle connection = the least-squares slope
 * over those samples); then ROUNDS times a latency phase
 * (100 events/s for 2 s, publish-to-delivery measured at the client) and a burst phase (1,000
 * events published as fast as possible; deliveries/s until the last one arrived). Rates are
 * medians over the rounds, latency percentiles come from all rounds together.
 *
 *   pnpm bench fanout   (FANOUT_SIZES=2000,10000 FANOUT_IMPLS=ws,bridge,socketio FANOUT_ROUNDS=2
 *                        FANOUT_STORM=0 to skip the storm, FANOUT_DEBUG=1 for per-round lines and the storm's NATS msgs/requests,
 *                        FANOUT_LOADGENS=2, FANOUT_PROF=dir for --cpu-prof of server and load generators,
 *                        FANOUT_PROF_LATENCY=dir for a profile of the server in the latency phases only,
 *                        FANOUT_LATENCY_SECONDS=10, the latency phase's length)
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { connect } from "@nats-io/transport-node";
import { createSync } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { environment } from "./lib/table.js";
import { cpus } from "node:os";
import { start, type Proc } from "./fanout/procs.js";
import { CpuSampler, bottleneck, byName, formatShares, listenOverflows, type CpuShare } from "./fanout/cpu.js";
import { LoadGroup } from "./fanout/loadgroup.js";
import { printFanout, printStorm, type Result, type StormResult, type StormStage } from "./fanout/report.js";
import { natsDelta, natsSnapshot, type NatsSnapshot } from "./fanout/nats-stats.js";
import { namespaceConsumers } from "./lib/monitor.js";
import { Histogram, NAMESPACE, TOPIC, now, subjectOf, tenantOf, type Impl, type Payload } from "./fanout/shared.js";

const TENANTS = 100;
const SIZES = (process.env.FANOUT_SIZES ?? "2000,10000").split(",").map(Number).filter((n) => n > 0); // "0": the storm only
const IMPLS = (process.env.FANOUT_IMPLS ?? "ws,bridge,socketio").split(",") as Impl[];
const LATENCY_RATE = 100; // events/s during the latency phase
/**
 * The latency phase's length: its p99 is the worst 1% of rate x seconds events x clients per
 * tenant. Each event reaches all clients of its tenant at once, so the p99 is set by the worst
 * 1% of EVENTS: 10 s (2 x 1,000 events) makes that the worst 20, where 2 s made it the worst 4,
 * one stall of any process, and the p99 ratio swung 0.6x-3.3x between runs of the same code.
 */
const LATENCY_SECONDS = Number(process.env.FANOUT_LATENCY_SECONDS ?? 10);
const BURST = 1_000; // events published as fast as possible during the throughput phase
/** Latency and burst phases run this many times per configuration; rates are medians, latencies merged. */
const ROUNDS = Number(process.env.FANOUT_ROUNDS ?? 2);
/** Load-generator processes; one saturates its core parsing the frames of 10,000 sockets. */
const LOADGENS = Number(process.env.FANOUT_LOADGENS ?? 2);
/** Samples of the server's memory from half to all of the connections (the slope's steps). */
const MEMORY_STEPS = 4;
/** A directory for CPU profiles of the server taken in the latency phases only. */
const PROF_LATENCY = process.env.FANOUT_PROF_LATENCY;
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

const consumers = () => namespaceConsumers(nats.monitorUrl, NAMESPACE);

/** Least-squares slope of `y` over the samples' connection counts: bytes per connection. */
function slope<S extends { n: number }>(samples: S[], y: (s: S) => number): number {
  const mx = samples.reduce((a, s) => a + s.n, 0) / samples.length;
  const my = samples.reduce((a, s) => a + y(s), 0) / samples.length;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.n - mx) * (y(s) - my);
    den += (s.n - mx) ** 2;
  }
  return num / den;
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

/** Publishes `count` events with up to 256 in flight (a sliding window: no pause between batches). */
async function publishBurst(impl: Impl, count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await publish(impl, next++);
  };
  await Promise.all(Array.from({ length: Math.min(256, count) }, lane));
  if (impl !== "bridge") await nc.flush();
}

/** Orchestrator's view of the processes to sample: the server and the load generators are added per run. */
function sampler(server: Proc): CpuSampler {
  return new CpuSampler([
    { name: "server", pid: server.child.pid },
    ...load.pids.map((pid) => ({ name: "load", pid })),
    { name: "nats", pid: nats.pid },
    { name: "publisher", pid: process.pid },
  ]);
}

function verdictOf(s: CpuSampler): { shares: CpuShare[]; bottleneck: string; serverCpuSeconds: number } {
  const perProcess = s.stop();
  const shares = byName(perProcess);
  const server = shares.find((x) => x.name === "server")?.cores ?? Number.NaN;
  return { shares, bottleneck: bottleneck(shares, cpus().length, perProcess, s.machineCores), serverCpuSeconds: server * s.seconds };
}

async function run(impl: Impl, n: number): Promise<Result> {
  const server = start("./server.ts", [impl, nats.url], ["--expose-gc", ...prof], true);
  const ready = await server.wait<{ port: number; rss: number; heap: number }>("ready");
  // Memory per idle connection is the slope from half to all of the connections: the fixed
  // costs (one follower per tenant, code compiled on first use, the young generation grown by
  // the connect) fall out. RSS moves in steps (heap pages, malloc arenas), which at 1,000
  // connections are a KB per connection either way: the slope is a least-squares fit over
  // MEMORY_STEPS + 1 samples, not the difference of two.
  const half = n / 2;
  let connectMs = await load.connect(impl, ready.port, half, TENANTS, 0);
  const samples: { n: number; rss: number; heap: number }[] = [];
  for (let step = 0; ; step++) {
    await new Promise((r) => setTimeout(r, 500));
    const open = half + Math.round(((n - half) * step) / MEMORY_STEPS);
    samples.push({ n: open, ...(await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory")) });
    if (step === MEMORY_STEPS) break;
    const next = half + Math.round(((n - half) * (step + 1)) / MEMORY_STEPS);
    connectMs += await load.connect(impl, ready.port, next - open, TENANTS, open);
  }
  const inUse = await consumers();

  const h = new Histogram();
  const rates: number[] = [];
  let latencyDelivered = 0;
  let burstDelivered = 0;
  const latencyPerClient = (LATENCY_RATE * LATENCY_SECONDS) / TENANTS;
  const burstPerClient = BURST / TENANTS;
  let burstCpu = { shares: [] as CpuShare[], bottleneck: "-", serverCpuSeconds: 0 };
  const cpuPerDelivery: number[] = [];
  let latencyCpu = burstCpu;
  for (let round = 0; round < ROUNDS; round++) {
    // latency at a moderate, fixed rate
    const lat = await load.expect(latencyPerClient, 30_000);
    const latSampler = sampler(server);
    if (PROF_LATENCY) await server.ask({ cmd: "profile" }, "profile");
    const lagBefore = await server.ask<{ buckets: Record<string, number> }>({ cmd: "lag" }, "lag");
    latSampler.start();
    const t0 = now();
    for (let i = 0; i < LATENCY_RATE * LATENCY_SECONDS; i++) {
      const due = t0 + (i * 1000) / LATENCY_RATE;
      const wait = due - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void publish(impl, i);
    }
    const latency = await lat.done;
    latencyCpu = verdictOf(latSampler);
    const lagAfter = await server.ask<{ buckets: Record<string, number> }>({ cmd: "lag" }, "lag");
    if (PROF_LATENCY) await server.ask({ cmd: "profile", file: `${PROF_LATENCY}/latency.${impl}.${n}.${round}.cpuprofile` }, "profile");
    h.merge(latency.hist);
    latencyDelivered += latency.delivered;

    if (process.env.FANOUT_DEBUG && impl === "bridge") {
      // Where the tail is: the bridge's own publish-to-send lag (before the kernel and the load
      // generators) as the share of this phase's deliveries under each bucket.
      const total = (lagAfter.buckets["+Inf"] ?? 0) - (lagBefore.buckets["+Inf"] ?? 0);
      const shares = ["0.005", "0.01", "0.025", "0.05"].map((le) => `<= ${Number(le) * 1000} ms ${(((lagAfter.buckets[le] ?? 0) - (lagBefore.buckets[le] ?? 0)) / Math.max(1, total) * 100).toFixed(2)}%`);
      const roundHist = new Histogram();
      roundHist.merge(latency.hist);
      console.error(`    ${impl} x ${n} round ${round + 1}: at the clients p50 ${roundHist.quantile(0.5).toFixed(2)} ms, p99 ${roundHist.quantile(0.99).toFixed(2)} ms; in the bridge (publish to send) ${shares.join(", ")} of ${total} deliveries`);
    }

    // throughput: a burst published as fast as the publisher can, until every delivery arrived
    const burst = await load.expect(burstPerClient, 60_000);
    const burstSampler = sampler(server);
    burstSampler.start();
    const b0 = now();
    await publishBurst(impl, BURST);
    const published = now();
    const result = await burst.done;
    burstCpu = verdictOf(burstSampler);
    cpuPerDelivery.push((burstCpu.serverCpuSeconds * 1e6) / result.delivered);
    burstDelivered += result.delivered;
    rates.push(result.delivered / ((result.lastAt - b0) / 1000));
    if (process.env.FANOUT_DEBUG) {
      console.error(
        `    ${impl} x ${n} round ${round + 1}: burst published in ${(published - b0).toFixed(0)} ms, first delivery at ${(result.firstAt - b0).toFixed(0)} ms, last at ${(result.lastAt - b0).toFixed(0)} ms; cores ${formatShares(burstCpu.shares)}`,
      );
    }
  }
  const rate = [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!;

  await load.disconnect();
  await server.ask({ cmd: "stop" }, "stopped");
  return {
    impl,
    n,
    connectMs,
    perConnRss: slope(samples, (m) => m.rss),
    perConnHeap: slope(samples, (m) => m.heap),
    consumers: inUse,
    p50: h.quantile(0.5),
    p99: h.quantile(0.99),
    latencyDelivered,
    latencyExpected: ROUNDS * latencyPerClient * n,
    rate,
    burstDelivered,
    burstExpected: ROUNDS * burstPerClient * n,
    burstCpu: burstCpu.shares,
    serverCpuMicros: [...cpuPerDelivery].sort((a, b) => a - b)[Math.floor(cpuPerDelivery.length / 2)]!,
    burstBottleneck: burstCpu.bottleneck,
    latencyCpu: latencyCpu.shares,
    latencyBottleneck: latencyCpu.bottleneck,
  };
}

async function storm(): Promise<StormResult> {
  const first = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
  const a = await first.wait<{ port: number }>("ready");
  await load.connect("bridge", a.port, STORM_CLIENTS, TENANTS, 0, 120_000);
  await load.disconnect(true);
  await first.ask({ cmd: "stop" }, "stopped");
  // while no bridge runs, every tenant gets 50 events: each client is 50 behind
  const before = await topic.head();
  await publishBurst("bridge", STORM_BEHIND * TENANTS);
  const second = start("./server.ts", ["bridge", nats.url], ["--expose-gc", ...prof], true);
  const b = await second.wait<{ port: number }>("ready");
  let peak = 0;
  // a monitoring request that fails under load is one sample less, not the end of the run
  const sampler = setInterval(() => void consumers().then((c) => (peak = Math.max(peak, c)), () => undefined), 50);
  const cpu = new CpuSampler([{ name: "server", pid: second.child.pid }, ...load.pids.map((pid) => ({ name: "load", pid })), { name: "nats", pid: nats.pid }]);
  cpu.start();
  const overflows = listenOverflows();
  // FANOUT_DEBUG: the broker's view of the storm (requests and messages per connection)
  const natsBefore: NatsSnapshot | undefined = process.env.FANOUT_DEBUG ? await natsSnapshot(nats.monitorUrl) : undefined;
  const resumed = await load.resume(b.port);
  const perProcess = cpu.stop();
  const overflowed = listenOverflows() - overflows;
  clearInterval(sampler);
  if (natsBefore) console.error(`    storm NATS: ${natsDelta(natsBefore, await natsSnapshot(nats.monitorUrl))}`);
  const counts = await second.ask<{ follow: number; replay: number }>({ cmd: "counts" }, "counts");
  await load.disconnect(true);
  await second.ask({ cmd: "stop" }, "stopped");
  const shares = byName(perProcess);
  const raw = await rawStorm(before);
  return {
    ...resumed,
    ...counts,
    peak,
    cpu: shares,
    bottleneck: bottleneck(shares, cpus().length, perProcess, cpu.machineCores),
    serverCpuMs: serverCpuMs(shares, cpu.seconds),
    overflows: overflowed,
    raw,
  };
}

/** Server CPU per resuming client, ms: its cores x the storm's wall seconds over the clients. */
function serverCpuMs(shares: CpuShare[], seconds: number): number {
  return (((shares.find((s) => s.name === "server")?.cores ?? Number.NaN) * seconds) / STORM_CLIENTS) * 1000;
}

/**
 * The storm's floor: the same clients, in the same load-generator processes, reconnect at once
 * to a raw `ws` server (fanout/storm-ws.ts) that answers each subscribe with its tenant's same
 * 50 events from memory. It does not read the cursor a client sends (the one the bridge gave
 * it): every client gets the events the bridge replayed to it, the same frames and bytes.
 */
async function rawStorm(before: string): Promise<StormStage> {
  // the events the bridge replayed, read once from the stream (not part of the timed storm)
  const byTenant: Record<string, { hub: string; events: unknown[] }> = {};
  for await (const e of topic.replay({ after: before })) {
    const t = e.tenantId ?? "";
    (byTenant[t] ??= { hub: `h${Object.keys(byTenant).length.toString(36)}`, events: [] }).events.push(e);
  }
  const server = start("./storm-ws.ts", [], prof, true);
  const { port } = await server.wait<{ port: number }>("ready");
  await server.ask({ cmd: "events", events: byTenant }, "events");
  const cpu = new CpuSampler([{ name: "server", pid: server.child.pid }, ...load.pids.map((pid) => ({ name: "load", pid }))]);
  cpu.start();
  const overflows = listenOverflows();
  const resumed = await load.resume(port);
  const perProcess = cpu.stop();
  const overflowed = listenOverflows() - overflows;
  await load.disconnect();
  await server.ask({ cmd: "stop" }, "stopped");
  const shares = byName(perProcess);
  return { ...resumed, cpu: shares, bottleneck: bottleneck(shares, cpus().length, perProcess, cpu.machineCores), serverCpuMs: serverCpuMs(shares, cpu.seconds), overflows: overflowed };
}

const prof = process.env.FANOUT_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.FANOUT_PROF}`] : [];
const load = new LoadGroup(LOADGENS, [], prof);
await load.ready();
const results: Result[] = [];
for (const n of SIZES) {
  for (const impl of IMPLS) {
    const r = await run(impl, n);
    results.push(r);
    console.error(
      `  ${impl} x ${n}: ${Math.round(r.rate)} deliveries/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${(r.perConnRss / 1024).toFixed(1)} KB/conn; burst bottleneck: ${r.burstBottleneck}`,
    );
  }
}
const stormResult = IMPLS.includes("bridge") && process.env.FANOUT_STORM !== "0" ? await storm() : undefined;
await load.close();
await nc.close();
await sync.close();

if (SIZES.length > 0) printFanout(results, SIZES, ROUNDS, `Fan-out over ${TENANTS} tenants, ${LOADGENS} load-generator processes (${environment()})`);
if (stormResult) printStorm(stormResult, STORM_CLIENTS, STORM_BEHIND);
