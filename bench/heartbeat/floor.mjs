// Idle CPU and RSS per connection of floor-server.mjs, measured as probe.mjs measures the bridge:
// N idle connections from load.mjs (the 1.5 client's heartbeat), SETTLE seconds for every
// connection to have its first ping, then the server's utime + stime over WINDOW seconds.
//
//   node bench/heartbeat/floor.mjs                        # over ws, as the bridge
//   KIND=uws UWS=/path/to/uws.js node bench/heartbeat/floor.mjs
//
// N (3000), SETTLE (30), WINDOW (60), HB (10000), KIND (ws|uws), UWS (a uWebSockets.js module).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cpu, freePort, rss } from "./proc.mjs";
import { setTimeout as sleep } from "node:timers/promises";

const env = (name, fallback) => Number(process.env[name] ?? fallback);
const N = env("N", 3000);
const SETTLE = env("SETTLE", 30);
const WINDOW = env("WINDOW", 60);
const KIND = process.env.KIND ?? "ws";
if (KIND === "uws" && !process.env.UWS) throw new Error("KIND=uws needs UWS=<path of a uWebSockets.js module>");

const here = (file) => fileURLToPath(new URL(file, import.meta.url));

const port = await freePort();
const server = spawn(process.execPath, [here("./floor-server.mjs"), String(port)], { stdio: ["ignore", "pipe", "inherit"] });
await new Promise((resolve) => server.stdout.on("data", (d) => String(d).includes('"listening"') && resolve()));
const rss0 = rss(server.pid);
const started = Date.now();
const load = spawn(process.execPath, [here("./load.mjs"), `ws://127.0.0.1:${port}/ws`, String(N)], { stdio: ["ignore", "pipe", "inherit"] });
await new Promise((resolve) => load.stdout.once("data", resolve));
const connectS = (Date.now() - started) / 1000;
await sleep(SETTLE * 1000);
const cpu0 = cpu(server.pid);
const t0 = Date.now();
await sleep(WINDOW * 1000);
const seconds = (Date.now() - t0) / 1000;
console.log(
  JSON.stringify({
    kind: KIND,
    connections: N,
    connectS,
    windowS: +seconds.toFixed(1),
    serverIdleCpuUsPerConnSecond: +(((cpu(server.pid) - cpu0) * 1e6) / (N * seconds)).toFixed(2),
    serverRssPerConnKB: +((rss(server.pid) - rss0) / N / 1024).toFixed(1),
  }),
);
load.kill("SIGKILL");
server.kill("SIGKILL");
