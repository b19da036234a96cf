/**
 * Scale point of issue 15: 50,000 idle bridge connections on ONE bridge process (100 tenants,
 * hub mode), opened by several load-generator processes from several loopback source addresses
 * (127.0.0.2-9; one address gives at most ~28,000 ports towards one server port). Records the
 * server's memory per connection (RSS and heap, the slope between half and all connections,
 * and the total over the process before any connection) and publish-to-delivery p50/p99 at
 * one event per second per tenant, with each process's CPU during that phase.
 *
 *   pnpm bench idle   (IDLE_CONNECTIONS=50000 IDLE_LOADGENS=4 IDLE_SECONDS=10 IDLE_TENANTS=100)
 *
 * Raises the open-files limit of the server and load generators with prlimit (50,000 sockets
 * are more than the usual 20,000); without the right to (a container without CAP_SYS_RESOURCE
 * cannot go past its hard limit, 20,000 here), it says so and stops.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { createSync } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { environment } from "./lib/table.js";
import { start } from "./fanout/procs.js";
import { CpuSampler, bottleneck, byName, formatShares } from "./fanout/cpu.js";
import { LoadGroup } from "./fanout/loadgroup.js";
import { NAMESPACE, TOPIC, now, tenantOf, type Payload } from "./fanout/shared.js";
import { TARGETS } from "./fanout/report.js";

const N = Number(process.env.IDLE_CONNECTIONS ?? 50_000);
const LOADGENS = Number(process.env.IDLE_LOADGENS ?? 4);
const SECONDS = Number(process.env.IDLE_SECONDS ?? 10);
const TENANTS = Number(process.env.IDLE_TENANTS ?? 100);
const ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const title = "Your order #12345 has shipped and is on its way";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
for (const pkg of ["shared", "server"]) {
  execFileSync(process.execPath, [tsc, "-p", `packages/${pkg}/tsconfig.build.json`], { stdio: "inherit" });
}

/** Raises the open-files limit of `pid` to fit `sockets`; stops the run when it stays too low. */
function raiseFileLimit(pid: number | undefined, sockets: number): void {
  if (pid === undefined) return;
  const limit = sockets + 1_000;
  try {
    execFileSync("prlimit", ["--pid", String(pid), `--nofile=${limit}:${limit}`], { stdio: "ignore" });
  } catch {
    // checked below
  }
  const have = Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1] ?? Number.NaN);
  if (have < limit) {
    console.error(
      `open-files limit of pid ${pid} is ${have} and could not be raised to ${limit} (prlimit needs CAP_SYS_RESOURCE past the hard limit): ` +
        `run with IDLE_CONNECTIONS below ${have - 1_000}, or raise the limit (ulimit -Hn) first`,
    );
    process.exit(2);
  }
}

await using nats = await startBenchNats({ monitoring: true });
const sync = createSync({ namespace: NAMESPACE, nats: { servers: nats.url } });
const topic = sync.topic<Payload>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
await topic.head();

const server = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
raiseFileLimit(server.child.pid, N);
const ready = await server.wait<{ port: number; rss: number; heap: number }>("ready");
const load = new LoadGroup(LOADGENS, ADDRESSES);
for (const pid of load.pids) raiseFileLimit(pid, Math.ceil(N / LOADGENS));
await load.ready();

const half = Math.floor(N / 2);
const firstMs = await load.connect("bridge", ready.port, half, TENANTS, 0, 600_000);
await new Promise((r) => setTimeout(r, 1_000));
const memHalf = await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory");
const secondMs = await load.connect("bridge", ready.port, N - half, TENANTS, half, 600_000);
await new Promise((r) => setTimeout(r, 1_000));
const mem = await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory");
console.error(`  connected ${N} in ${((firstMs + secondMs) / 1000).toFixed(1)} s; RSS ${(mem.rss / 2 ** 20).toFixed(0)} MB`);

// one event per second per tenant, round-robin, for SECONDS seconds
const events = TENANTS * SECONDS;
const expect = await load.expect(SECONDS, 60_000);
const cpu = new CpuSampler([
  { name: "server", pid: server.child.pid },
  ...load.pids.map((pid) => ({ name: "load", pid })),
  { name: "nats", pid: nats.pid },
  { name: "publisher", pid: process.pid },
]);
cpu.start();
const t0 = now();
for (let i = 0; i < events; i++) {
  const wait = t0 + (i * 1000) / TENANTS - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  void topic.publish({ data: { t: now(), i, title }, tenantId: tenantOf(i, TENANTS) });
}
const got = await expect.done;
const perProcess = cpu.stop();
const shares = byName(perProcess);
const memAfter = await server.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory");

await load.disconnect();
await server.ask({ cmd: "stop" }, "stopped");
await load.close();
await sync.close();

const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const slopeRss = (mem.rss - memHalf.rss) / (N - half);
console.log(`\n### ${N.toLocaleString("en-US")} idle bridge connections on one bridge process (${environment()})\n`);
console.log("| measure | value | target |");
console.log("|:--|--:|:--|");
console.log(`| load generators x source addresses | ${LOADGENS} x ${ADDRESSES.length} |  |`);
console.log(`| connect + subscribe all, s | ${((firstMs + secondMs) / 1000).toFixed(1)} |  |`);
console.log(`| server RSS per idle connection, KB (slope ${half.toLocaleString("en-US")} -> ${N.toLocaleString("en-US")}) | ${kb(slopeRss)} | <= ${TARGETS.rssKb} ${slopeRss / 1024 <= TARGETS.rssKb ? "ok" : "MISSED"} |`);
console.log(`| server heap per idle connection, KB (same slope) | ${kb((mem.heap - memHalf.heap) / (N - half))} |  |`);
console.log(`| server RSS over the empty bridge, KB per connection | ${kb((mem.rss - ready.rss) / N)} |  |`);
console.log(`| server RSS with ${N.toLocaleString("en-US")} connections, MB (after the events) | ${(memAfter.rss / 2 ** 20).toFixed(0)} |  |`);
console.log(`| events published (1 per second per tenant, ${TENANTS} tenants, ${SECONDS} s) | ${events.toLocaleString("en-US")} |  |`);
console.log(`| deliveries (expected ${(SECONDS * N).toLocaleString("en-US")}) | ${got.delivered.toLocaleString("en-US")} |  |`);
console.log(`| p50 publish-to-delivery, ms | ${got.hist.quantile(0.5).toFixed(2)} |  |`);
console.log(`| p99 publish-to-delivery, ms | ${got.hist.quantile(0.99).toFixed(2)} |  |`);
console.log(`| CPU during the events, cores | ${formatShares(shares)} |  |`);
console.log(`| bottleneck | ${bottleneck(shares, cpus().length, perProcess, cpu.machineCores)} |  |`);
