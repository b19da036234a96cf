/**
 * The browser client in Debian's Chromium: 10 tabs of the demo, 1,000 events published.
 *   subject:  the default client (one SharedWorker holds the profile's only WebSocket)
 *   baseline: the same page forced to one WebSocket per tab (`?transport=direct`, the client's
 *             last resort) — what a page that opens its own socket costs
 * Reported per side (median of the rounds): WebSocket connections the server counts, time from
 * the start of publishing until every tab has rendered all 1,000 events, JS heap of the tabs,
 * and the SharedWorker's JS heap (CDP Runtime.getHeapUsage, after a forced GC).
 *
 *   pnpm bench browser              (BENCH_ROUNDS=n to change the rounds, default 3)
 */
import { EVENTS, TABS, measure, type Sample } from "../e2e/bench/browser.js";
import { median } from "./lib/measure.js";
import { environment } from "./lib/table.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const { subject, baseline, chromium } = await measure(ROUNDS);

const med = (xs: Sample[], f: (s: Sample) => number | undefined) => median(xs.map(f).filter((v): v is number => v !== undefined));
const rows: [string, number, number | undefined, string][] = [
  [`server publishes ${EVENTS.toLocaleString("en-US")} events (floor of the next row)`, med(subject, (s) => s.publishMs), med(baseline, (s) => s.publishMs), "ms"],
  ["WebSocket connections on the server", med(subject, (s) => s.connections), med(baseline, (s) => s.connections), "connections"],
  [`time to render ${EVENTS.toLocaleString("en-US")} events in all ${TABS} tabs`, med(subject, (s) => s.renderMs), med(baseline, (s) => s.renderMs), "ms"],
  [`JS heap of the ${TABS} tabs`, med(subject, (s) => s.tabsHeapMb), med(baseline, (s) => s.tabsHeapMb), "MiB"],
  ["JS heap of the SharedWorker", med(subject, (s) => s.workerHeapMb), undefined, "MiB"],
];
const fmt = (n: number | undefined, unit: string) => (n === undefined || Number.isNaN(n) ? "-" : unit === "MiB" ? n.toFixed(1) : Math.round(n).toLocaleString("en-US"));
const header = ["benchmark", "shared worker", "socket per tab", "unit", "ratio"];
const body = rows.map(([name, s, b, unit]) => [name, fmt(s, unit), fmt(b, unit), unit, b === undefined || Number.isNaN(b) ? "-" : (s / b).toFixed(2)]);
const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 || i === 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
console.log(`### Browser client: ${TABS} tabs, ${EVENTS.toLocaleString("en-US")} events (median of ${ROUNDS} rounds)\n`);
console.log(`${environment()}, Chromium ${chromium}\n`);
console.log(line(header));
console.log(`|${widths.map((w, i) => (i === 0 || i === 3 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
for (const r of body) console.log(line(r));
console.log("\nratio = shared worker / socket per tab (lower is better for every row).");
