/**
 * Fan-out of the bridge on Node, Bun and Deno: the fan-out benchmark's bridge measurement
 * (bench/fanout.bench.ts) with the same load generator, events and phases, one bridge process
 * per runtime. Node serves the built packages over TCP NATS (fanout/server.ts); Bun and Deno
 * serve fanout/edge-server.ts, bundled with esbuild, over NATS by WebSocket (`wsconnect` to the
 * nats-server's WebSocket listener), as they would deployed. workerd is not here: it has no
 * figure comparable to a process (a Durable Object is single-threaded behind Cloudflare's
 * front end, and the local workerd is not that), see docs/edge.md.
 *
 * Per runtime: connect half the clients, read the server's memory, connect the rest, read it
 * again (memory per idle connection = the slope); then ROUNDS times a latency phase (100
 * events/s for 2 s) and a burst phase (1,000 events as fast as possible).
 *
 *   pnpm bench edge   (EDGE_SIZES=2000 EDGE_RUNTIMES=node,bun,deno EDGE_ROUNDS=3)
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { createSync } from "@tidemark/server";
import { startBenchNats } from "./lib/nats.js";
import { environment } from "./lib/table.js";
import { start, type Proc } from "./fanout/procs.js";
import { Histogram, NAMESPACE, TOPIC, now, tenantOf, type Payload } from "./fanout/shared.js";

type Runtime = "node" | "bun" | "deno";
const TENANTS = 100;
const SIZES = (process.env.EDGE_SIZES ?? "2000").split(",").map(Number);
const RUNTIMES = (process.env.EDGE_RUNTIMES ?? "node,bun,deno").split(",") as Runtime[];
const ROUNDS = Number(process.env.EDGE_ROUNDS ?? 3);
const LATENCY_RATE = 100;
const LATENCY_SECONDS = 2;
const BURST = 1_000;
const title = "Your order #12345 has shipped and is on its way";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** A binary of an npm platform package, resolved from its wrapper package (a root dev dependency). */
const binary = (wrapper: string, pkg: string, file: string) =>
  join(dirname(createRequire(require.resolve(`${wrapper}/package.json`)).resolve(`${pkg}/package.json`)), file);

// Node runs the BUILT packages, as fanout.bench.ts does (tsx's keepNames would inflate memory).
const tsc = require.resolve("typescript/bin/tsc");
for (const pkg of ["shared", "server"]) execFileSync(process.execPath, [tsc, "-p", `packages/${pkg}/tsconfig.build.json`], { stdio: "inherit" });

const work = mkdtempSync(join(tmpdir(), "tidemark-edge-bench-"));
const bundled = join(work, "edge-server.mjs");
await build({
  entryPoints: [join(here, "fanout/edge-server.ts")],
  outfile: bundled,
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["@tidemark/source"],
  mainFields: ["module", "main"],
  external: ["node:*", "crypto"],
  logLevel: "error",
});

await using nats = await startBenchNats({ monitoring: true, websocket: true });
const sync = createSync({ namespace: NAMESPACE, nats: { servers: nats.url } });
const topic = sync.topic<Payload>({ id: TOPIC, retention: { maxBytes: 256 * 1024 * 1024 } });
await topic.head();

/** A bridge server of one runtime: its port, its memory, and how to stop it. */
interface Server {
  port: number;
  memory(): Promise<{ rss: number; heap: number }>;
  stop(): Promise<void>;
}

async function startServer(runtime: Runtime): Promise<Server> {
  if (runtime === "node") {
    const proc = start("./server.ts", ["bridge", nats.url], ["--expose-gc"], true);
    const { port } = await proc.wait<{ port: number }>("ready");
    return {
      port,
      memory: () => proc.ask<{ rss: number; heap: number }>({ cmd: "memory" }, "memory"),
      stop: async () => void (await proc.ask({ cmd: "stop" }, "stopped")),
    };
  }
  const [command, args] =
    runtime === "bun"
      ? [binary("bun", "@oven/bun-linux-x64", "bin/bun"), ["run", bundled]]
      : [binary("deno", "@deno/linux-x64-glibc", "deno"), ["run", "--quiet", "--allow-net", "--allow-env", "--v8-flags=--expose-gc", bundled]];
  const child: ChildProcess = spawn(command, args, {
    env: { ...process.env, NATS_WS_URL: nats.wsUrl!, NO_COLOR: "1", DENO_DIR: join(work, "deno") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`${runtime} exited (${code}) before listening: ${out}`)));
  });
  return {
    port,
    memory: async () => (await (await fetch(`http://127.0.0.1:${port}/bench/memory`)).json()) as { rss: number; heap: number },
    stop: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function publish(i: number): Promise<unknown> {
  return topic.publish({ data: { t: now(), i, title }, tenantId: tenantOf(i, TENANTS) });
}

interface Result {
  runtime: Runtime;
  n: number;
  connectMs: number;
  perConnRss: number;
  perConnHeap: number;
  p50: number;
  p99: number;
  rate: number;
  complete: boolean;
}

async function run(load: Proc, runtime: Runtime, n: number): Promise<Result> {
  const server = await startServer(runtime);
  const half = n / 2;
  const first = await load.ask<{ ms: number }>({ cmd: "connect", impl: "bridge", port: server.port, n: half, tenants: TENANTS }, "connected", 180_000);
  await new Promise((r) => setTimeout(r, 500));
  const memHalf = await server.memory();
  const second = await load.ask<{ ms: number }>({ cmd: "connect", impl: "bridge", port: server.port, n: n - half, tenants: TENANTS, offset: half }, "connected", 180_000);
  await new Promise((r) => setTimeout(r, 500));
  const mem = await server.memory();
  const perTenant = n / TENANTS;
  const h = new Histogram();
  const rates: number[] = [];
  let complete = true;
  for (let round = 0; round < ROUNDS; round++) {
    const expected = LATENCY_RATE * LATENCY_SECONDS * perTenant;
    const lat = load.ask<{ delivered: number; hist: [number, number][] }>({ cmd: "expect", count: expected, timeoutMs: 30_000 }, "delivered", 60_000);
    await load.wait("expecting");
    const t0 = now();
    for (let i = 0; i < LATENCY_RATE * LATENCY_SECONDS; i++) {
      const wait = t0 + (i * 1000) / LATENCY_RATE - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void publish(i);
    }
    const latency = await lat;
    h.merge(Histogram.from(latency.hist));
    complete &&= latency.delivered === expected;

    const burst = load.ask<{ delivered: number; lastAt: number }>({ cmd: "expect", count: BURST * perTenant, timeoutMs: 60_000 }, "delivered", 90_000);
    await load.wait("expecting");
    const b0 = now();
    for (let i = 0; i < BURST; i += 256) await Promise.all(Array.from({ length: Math.min(256, BURST - i) }, (_, k) => publish(i + k)));
    const result = await burst;
    complete &&= result.delivered === BURST * perTenant;
    rates.push(result.delivered / ((result.lastAt - b0) / 1000));
  }
  await load.ask({ cmd: "disconnect" }, "disconnected");
  await server.stop();
  return {
    runtime,
    n,
    connectMs: first.ms + second.ms,
    perConnRss: (mem.rss - memHalf.rss) / (n - half),
    perConnHeap: (mem.heap - memHalf.heap) / (n - half),
    p50: h.quantile(0.5),
    p99: h.quantile(0.99),
    rate: [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!,
    complete,
  };
}

const load = start("./load.ts", []);
await load.wait("ready");
const results: Result[] = [];
try {
  for (const n of SIZES) {
    for (const runtime of RUNTIMES) {
      const r = await run(load, runtime, n);
      results.push(r);
      console.error(`  ${runtime} x ${n}: ${Math.round(r.rate)} deliveries/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${(r.perConnRss / 1024).toFixed(1)} KB/conn`);
    }
  }
} finally {
  await load.ask({ cmd: "close" }, "closed");
  await sync.close();
  rmSync(work, { recursive: true, force: true });
}

const fmt = (v: number, digits = 0) => (Number.isNaN(v) ? "-" : v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const version = (cmd: string, args: string[]) => execFileSync(cmd, args).toString().split("\n")[0]!.trim();
console.log(`\n### Bridge fan-out per runtime over ${TENANTS} tenants (${environment()})\n`);
console.log(
  `Bun ${version(binary("bun", "@oven/bun-linux-x64", "bin/bun"), ["--version"])}, ${version(binary("deno", "@deno/linux-x64-glibc", "deno"), ["--version"])}; Node over TCP NATS, Bun and Deno over WebSocket NATS.\n`,
);
console.log(`| measure | connections | ${RUNTIMES.join(" | ")} |`);
console.log(`|:--|--:|${RUNTIMES.map(() => "--:").join("|")}|`);
for (const n of SIZES) {
  const row = (name: string, f: (r: Result) => number, digits: number) =>
    console.log(`| ${name} | ${n.toLocaleString("en-US")} | ${RUNTIMES.map((rt) => {
      const r = results.find((x) => x.runtime === rt && x.n === n);
      return r ? fmt(f(r), digits) : "-";
    }).join(" | ")} |`);
  row(`delivered events/s (burst, median of ${ROUNDS})`, (r) => r.rate, 0);
  row("p50 publish-to-delivery, ms", (r) => r.p50, 2);
  row("p99 publish-to-delivery, ms", (r) => r.p99, 2);
  row("server memory per idle connection, KB (RSS)", (r) => r.perConnRss / 1024, 1);
  row("server heap per idle connection, KB", (r) => r.perConnHeap / 1024, 1);
  row("connect + subscribe all, s", (r) => r.connectMs / 1000, 1);
  row("deliveries complete", (r) => (r.complete ? 1 : 0), 0);
}
