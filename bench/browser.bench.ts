/**
 * The browser client in Debian's Chromium: 10 tabs of the demo, 1,000 events published.
 *   shared worker: the default client (one SharedWorker holds the profile's only WebSocket)
 *   leader tab:    the fallback without SharedWorker (`?transport=leader`: a Web Locks leader
 *                  holds the socket and serves the other tabs over BroadcastChannel)
 *   socket per tab (baseline): the page forced to one WebSocket per tab (`?transport=direct`,
 *                  the client's last resort) — what a page that opens its own socket costs
 * Reported per side (median of the rounds): WebSocket connections the server counts, time from
 * the start of publishing until every tab has rendered all 1,000 events (issue #15's row: under
 * 1 s with the shared worker, printed with "ok"/"MISSED"), the CPU the whole browser used for
 * it, JS heap of the tabs, and the SharedWorker's JS heap (CDP Runtime.getHeapUsage, after a
 * forced GC).
 *
 *   pnpm bench browser              (BENCH_ROUNDS=n to change the rounds, default 3;
 *                                    BENCH_SIDES=auto to measure the shared worker only)
 */
import { EVENTS, TABS, measure, type Sample, type Side } from "../e2e/bench/browser.js";
import { median } from "./lib/measure.js";
import { environment } from "./lib/table.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Issue #15: 10 tabs x 1,000 events rendered in under a second with the shared worker. */
const RENDER_TARGET_MS = 1_000;
// BENCH_SIDES=auto (comma-separated: auto, leader, direct) measures only those; the others print "-".
const SIDES = (process.env.BENCH_SIDES ?? "auto,leader,direct").split(",") as Side[];
const { samples, chromium } = await measure(ROUNDS, SIDES);
const { auto: subject, leader, direct: baseline } = samples;

const med = (xs: Sample[], f: (s: Sample) => number | undefined) => median(xs.map(f).filter((v): v is number => v !== undefined));
type Row = [name: string, shared: number, leader: number | undefined, perTab: number | undefined, unit: string, target?: number];
const row = (name: string, f: (s: Sample) => number | undefined, unit: string, withOthers = true, target?: number): Row => [
  name,
  med(subject, f),
  withOthers ? med(leader, f) : undefined,
  withOthers ? med(baseline, f) : undefined,
  unit,
  target,
];
const rows: Row[] = [
  row(`server publishes ${EVENTS.toLocaleString("en-US")} events (floor of the next row)`, (s) => s.publishMs, "ms"),
  row("WebSocket connections on the server", (s) => s.connections, "connections"),
  row(`time to render ${EVENTS.toLocaleString("en-US")} events in all ${TABS} tabs`, (s) => s.renderMs, "ms", true, RENDER_TARGET_MS),
  row("CPU of the browser (all processes) for it", (s) => s.browserCpuMs, "ms"),
  row("CPU of the demo server and nats-server for it", (s) => s.serverCpuMs, "ms"),
  row(`JS heap of the ${TABS} tabs`, (s) => s.tabsHeapMb, "MiB"),
  row("JS heap of the SharedWorker", (s) => s.workerHeapMb, "MiB", false),
];
const fmt = (n: number | undefined, unit: string) => (n === undefined || Number.isNaN(n) ? "-" : unit === "MiB" ? n.toFixed(1) : Math.round(n).toLocaleString("en-US"));
const header = ["benchmark", "shared worker", "leader tab", "socket per tab", "unit", "ratio", "target (shared worker)"];
const verdict = (s: number, target: number | undefined) => (target === undefined ? "-" : `< ${target.toLocaleString("en-US")} ${s < target ? "ok" : "MISSED"}`);
const body = rows.map(([name, s, l, b, unit, target]) => [
  name,
  fmt(s, unit),
  fmt(l, unit),
  fmt(b, unit),
  unit,
  b === undefined || Number.isNaN(b) ? "-" : (s / b).toFixed(2),
  verdict(s, target),
]);
const left = (i: number) => i === 0 || i === 4 || i === 6;
const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
console.log(`### Browser client: ${TABS} tabs, ${EVENTS.toLocaleString("en-US")} events (median of ${ROUNDS} rounds)\n`);
console.log(`${environment()}, Chromium ${chromium}\n`);
console.log(line(header));
console.log(`|${widths.map((w, i) => (left(i) ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
for (const r of body) console.log(line(r));
console.log("\nratio = shared worker / socket per tab (lower is better for every row).");
