// Idle CPU of one `tidemark serve` (a built dist) per connection-second, with N idle hub
// connections (one tenant each) from load.mjs in another process. A/B of the heartbeat (issue
// 29, protocol 1.5): run it against an older build and the current one, side by side.
//
//   pnpm -r --filter ./packages/** run build
//   node bench/heartbeat/probe.mjs                                   # current build, 1.5 clients
//   DIST=dist-old MODE=old HB=25000 node bench/heartbeat/probe.mjs   # a build kept from before
//
// N (3000), SETTLE (30 s: every connection has had its first ping), WINDOW (60 s), HB (the
// load's idea of the heartbeat; the bridge keeps its default unless SET_HB=1), DIST (dist),
// MODE (new|old), PROF=1 (--cpu-prof of the bridge; the profile's directory is printed),
// NODE_ARGS (more flags for the bridge's node, e.g. "--trace-gc"; its stdout is then kept in
// the printed directory as bridge.out), UWS (a uWebSockets.js module for `tidemark serve --uws`,
// e.g. @trufflesuite/uws-js-unofficial: the bridge over uWS instead of ws), HEAP=1 (a heap
// snapshot of the bridge after the window, summed by constructor with heap-summary.mjs).
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpu, freePort, rss } from "./proc.mjs";
import { setTimeout as sleep } from "node:timers/promises";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = (name, fallback) => Number(process.env[name] ?? fallback);
const N = env("N", 3000);
const HB = env("HB", 10_000);
const SETTLE = env("SETTLE", 30);
const WINDOW = env("WINDOW", 60);
const DIST = process.env.DIST ?? "dist";
const MODE = process.env.MODE ?? "new";
const PROF = process.env.PROF === "1";
const NODE_ARGS = (process.env.NODE_ARGS ?? "").split(" ").filter(Boolean);
const HEAP = process.env.HEAP === "1";
const KEEP = PROF || HEAP || NODE_ARGS.length > 0;
const UWS = process.env.UWS ? ["--uws", process.env.UWS] : [];
const natsServer = process.env.TIDEMARK_NATS_SERVER ?? (existsSync(join(root, ".tools/bin/nats-server")) ? join(root, ".tools/bin/nats-server") : "nats-server");


const dir = mkdtempSync(join(tmpdir(), "tidemark-heartbeat-"));
const natsPort = await freePort();
const nats = spawn(natsServer, ["-js", "-a", "127.0.0.1", "-p", String(natsPort), "-sd", join(dir, "js")], { stdio: "ignore" });
await sleep(800);
const config = join(dir, "tidemark.config.mjs");
const heartbeat = process.env.SET_HB === "1" ? `heartbeatMs: ${HB}, ` : "";
writeFileSync(config, `export default { namespace: "idle", topics: [{ id: "inbox", authorize: (p, r) => r.tenantId === p.id }], authenticate: (t) => ({ id: t }), ${heartbeat}logLevel: "warn" };`);
const port = await freePort();
const cli = join(root, "packages/server", DIST, "cli/main.js");
const bridge = spawn(process.execPath, [...(PROF ? ["--cpu-prof", "--cpu-prof-dir", dir] : []), ...(HEAP ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`] : []), ...NODE_ARGS, cli, "serve", "--config", config, "--nats", `nats://127.0.0.1:${natsPort}`, "--port", String(port), ...UWS], { stdio: ["ignore", "pipe", "inherit"], cwd: root });
if (KEEP) bridge.stdout.pipe(createWriteStream(join(dir, "bridge.out")));
await new Promise((resolve) => bridge.stdout.on("data", (d) => String(d).includes('"listening"') && resolve()));
const rss0 = rss(bridge.pid);
const connectStart = Date.now();
const load = spawn(process.execPath, [fileURLToPath(new URL("./load.mjs", import.meta.url)), `ws://127.0.0.1:${port}/ws`, String(N)], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, HB: String(HB), MODE } });
await new Promise((resolve) => load.stdout.once("data", resolve));
const connectS = (Date.now() - connectStart) / 1000;
await sleep(SETTLE * 1000);
const bridge0 = cpu(bridge.pid);
const nats0 = cpu(nats.pid);
const t0 = Date.now();
await sleep(WINDOW * 1000);
const seconds = (Date.now() - t0) / 1000;
const perConnSecond = (used) => +((used * 1e6) / (N * seconds)).toFixed(2);
console.log(
  JSON.stringify({
    dist: DIST,
    clients: MODE,
    connections: N,
    connectS,
    windowS: +seconds.toFixed(1),
    bridgeIdleCpuUsPerConnSecond: perConnSecond(cpu(bridge.pid) - bridge0),
    natsIdleCpuUsPerConnSecond: perConnSecond(cpu(nats.pid) - nats0),
    bridgeRssPerConnKB: +((rss(bridge.pid) - rss0) / N / 1024).toFixed(1),
  }),
);
if (HEAP) {
  bridge.kill("SIGUSR2");
  const snapshot = () => readdirSync(dir).find((f) => f.endsWith(".heapsnapshot"));
  // The file grows while V8 writes it: wait until its size holds still.
  let size = -1;
  for (;;) {
    await sleep(2000);
    const f = snapshot();
    if (!f) continue;
    const now = statSync(join(dir, f)).size;
    if (now === size && now > 0) break;
    size = now;
  }
  const summary = spawn(process.execPath, [fileURLToPath(new URL("./heap-summary.mjs", import.meta.url)), join(dir, snapshot()), String(N), "45"], { stdio: "inherit" });
  await new Promise((resolve) => summary.on("exit", resolve));
}
load.kill("SIGKILL");
bridge.kill("SIGINT");
await sleep(3000);
bridge.kill("SIGKILL");
nats.kill("SIGKILL");
if (KEEP) console.log(`profile and output in ${dir}`);
else rmSync(dir, { recursive: true, force: true });
