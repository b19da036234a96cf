/**
 * Profiles one shared-worker round of the browser benchmark: the V8 CPU profile of the
 * SharedWorker and of one tab (CDP Profiler), and a Chrome trace of every process, then prints
 * where the time went, and what each tab's frames cost (trace-frames.ts). The summary is in
 * docs/benchmarks/profiles/browser.md.
 *
 *   npx tsx --conditions=@tidemark/source e2e/bench/profile-browser.ts [outDir]
 *
 * Writes worker.cpuprofile, tab.cpuprofile and trace.json to outDir (default /tmp/browser-profile),
 * the first two readable in Chrome DevTools' Performance panel, the trace in chrome://tracing.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "@playwright/test";
import { DemoServer, demoDir } from "../lib/demo-server.js";
import { chromiumLaunch } from "../lib/browser.js";
import { EVENTS, armTabs, openTabs, renderedAt } from "./browser.js";
import { sharedWorkerSession } from "./worker-cdp.js";
import { browserCpuMs } from "./browser-cpu.js";
import { printFrames, type TraceEvent } from "./trace-frames.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function, in ms, largest first. */
function selfTimes(profile: CpuProfile): { total: number; rows: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const f = byId.get(id)!.callFrame;
    const file = f.url.split("/").pop() ?? "";
    const name = `${f.functionName || "(anonymous)"} ${file ? `${file}:${f.lineNumber + 1}` : ""}`.trim();
    self.set(name, (self.get(name) ?? 0) + ms);
    if (name !== "(idle)") total += ms;
  });
  return { total, rows: [...self].sort((a, b) => b[1] - a[1]) };
}

function printProfile(title: string, profile: CpuProfile): void {
  const { total, rows } = selfTimes(profile);
  console.log(`\n## ${title}: ${total.toFixed(0)} ms busy (samples not idle)\n`);
  for (const [name, ms] of rows.slice(0, 20)) console.log(`${ms.toFixed(1).padStart(8)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${name}`);
}


/** Per thread: busy time (its top-level tasks) and the event names that took the most time. */
function printTrace(events: TraceEvent[]): void {
  const names = new Map<string, string>();
  const procs = new Map<number, string>();
  for (const e of events) {
    if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args?.name ?? "?");
    if (e.ph === "M" && e.name === "process_name") procs.set(e.pid, e.args?.name ?? "?");
  }
  const threads = new Map<string, Map<string, number>>();
  for (const e of events) {
    if (e.ph !== "X" || e.dur === undefined) continue;
    const key = `${e.pid}:${e.tid}`;
    const m = threads.get(key) ?? new Map<string, number>();
    m.set(e.name, (m.get(e.name) ?? 0) + e.dur / 1000);
    threads.set(key, m);
  }
  const busy = (m: Map<string, number>) => (m.get("ThreadControllerImpl::RunTask") ?? 0) + (m.get("RunTask") ?? 0);
  const ranked = [...threads].sort((a, b) => busy(b[1]) - busy(a[1])).slice(0, 16);
  console.log("\n## Chrome trace: the busiest threads (ms in tasks), with their largest event kinds\n");
  for (const [key, m] of ranked) {
    const pid = Number(key.split(":")[0]);
    const top = [...m].filter(([n]) => !/RunTask/.test(n)).sort((a, b) => b[1] - a[1]).slice(0, 8);
    console.log(`${busy(m).toFixed(0).padStart(6)} ms  ${procs.get(pid) ?? pid} / ${names.get(key) ?? key}`);
    console.log(`          ${top.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(", ")}`);
  }
}

const outDir = process.argv[2] ?? "/tmp/browser-profile";
mkdirSync(outDir, { recursive: true });
execFileSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], { cwd: demoDir, stdio: "inherit" });
const server = await DemoServer.start({ env: { DEMO_DURABILITY: "buffered" } }); // as the benchmark
const browser = await chromium.launch(chromiumLaunch);
try {
  for (const round of [0, 1]) {
    // Round 0 warms up (JIT, HTTP cache, the server's hubs); round 1 is profiled.
    const context = await browser.newContext();
    const tenant = round === 0 ? "acme" : "globex";
    const { pages } = await openTabs(context, server, "auto", tenant);
    await armTabs(pages);
    const profiled = round === 1;
    const worker = profiled ? await sharedWorkerSession(browser) : undefined;
    const tab = profiled ? await context.newCDPSession(pages[0]!) : undefined;
    if (profiled) {
      await worker!.call("Profiler.enable");
      await worker!.call("Profiler.setSamplingInterval", { interval: 200 });
      await worker!.call("Profiler.start");
      await tab!.send("Profiler.enable");
      await tab!.send("Profiler.setSamplingInterval", { interval: 200 });
      await tab!.send("Profiler.start");
      await browser.startTracing(undefined, { categories: ["toplevel", "devtools.timeline", "v8", "blink", "IndexedDB", "ipc", "mojom"] });
    }
    const cpuBefore = browserCpuMs();
    const start = Date.now();
    await server.publish(tenant, `profile ${round}`, EVENTS);
    const publishMs = Date.now() - start;
    const ends = await renderedAt(pages);
    const renderMs = Math.max(...ends) - start;
    const cpu = browserCpuMs() - cpuBefore;
    console.log(`round ${round}: published in ${publishMs} ms, rendered in all tabs in ${renderMs} ms (first tab done at ${Math.min(...ends) - start} ms), browser CPU ${cpu} ms`);
    if (profiled) {
      const trace = await browser.stopTracing();
      const w = (await worker!.call("Profiler.stop")).profile as unknown as CpuProfile;
      const t = ((await tab!.send("Profiler.stop")) as { profile: CpuProfile }).profile;
      writeFileSync(join(outDir, "worker.cpuprofile"), JSON.stringify(w));
      writeFileSync(join(outDir, "tab.cpuprofile"), JSON.stringify(t));
      writeFileSync(join(outDir, "trace.json"), trace);
      printProfile("SharedWorker, self time", w);
      printProfile("tab 1 of 10, self time", t);
      const parsed = JSON.parse(trace.toString()) as { traceEvents: TraceEvent[] } | TraceEvent[];
      const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
      printTrace(events);
      printFrames(events);
      await worker!.close();
    }
    await context.close();
  }
} finally {
  await browser.close();
  await server.dispose();
}
