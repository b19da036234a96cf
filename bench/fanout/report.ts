/** The fan-out benchmark's tables: every bridge row of issue 15 with its target and ok/MISSED. */
import type { CpuShare } from "./cpu.js";
import type { Impl } from "./shared.js";
import type { Resumed } from "./loadgroup.js";

export interface Result {
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
  /** Cores each side used during the bursts (load generators summed) and the bottleneck. */
  burstCpu: CpuShare[];
  /** Server CPU per delivered event during the bursts, µs (median over rounds): barely moved by other load. */
  serverCpuMicros: number;
  burstBottleneck: string;
  latencyCpu: CpuShare[];
  latencyBottleneck: string;
}

/** Issue 15's targets for the bridge. */
export const TARGETS = {
  /** bridge delivered/s over raw ws delivered/s, at least */
  rateVsWs: 0.9,
  /** bridge p99 over raw ws p99, at most (and below Socket.IO's) */
  p99VsWs: 1.5,
  /** server RSS per idle connection, KB, at most */
  rssKb: 6,
  /** resume storm, seconds, under */
  stormSeconds: 3,
};

const fmt = (v: number | undefined, digits = 0) =>
  v === undefined || Number.isNaN(v) ? "-" : v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const verdict = (ok: boolean) => (ok ? "ok" : "MISSED");
const cores = (shares: CpuShare[]) => shares.map((s) => `${s.name} ${s.cores.toFixed(2)}`).join(", ");

export function printFanout(results: Result[], sizes: number[], rounds: number, title: string): void {
  const get = (impl: Impl, n: number) => results.find((r) => r.impl === impl && r.n === n);
  console.log(`\n### ${title}\n`);
  console.log("| measure | connections | bridge | raw ws | Socket.IO 4 | bridge / ws | target |");
  console.log("|:--|--:|--:|--:|--:|--:|:--|");
  for (const n of sizes) {
    const [b, w, s] = [get("bridge", n), get("ws", n), get("socketio", n)];
    const line = (name: string, cells: [string, string, string], ratio = "", target = "") =>
      console.log(`| ${name} | ${n.toLocaleString("en-US")} | ${cells.join(" | ")} | ${ratio} | ${target} |`);
    const num = (f: (r: Result) => number, digits: number): [string, string, string] => [fmt(b && f(b), digits), fmt(w && f(w), digits), fmt(s && f(s), digits)];
    const text = (f: (r: Result) => string): [string, string, string] => [b ? f(b) : "-", w ? f(w) : "-", s ? f(s) : "-"];

    const rateRatio = b && w ? b.rate / w.rate : undefined;
    line(
      `delivered events/s (burst, median of ${rounds})`,
      num((r) => r.rate, 0),
      fmt(rateRatio, 2),
      rateRatio === undefined ? `>= ${TARGETS.rateVsWs}x ws` : `>= ${TARGETS.rateVsWs}x ws ${verdict(rateRatio >= TARGETS.rateVsWs)}`,
    );
    line("bottleneck during the burst", text((r) => r.burstBottleneck));
    line("CPU during the burst, cores", text((r) => cores(r.burstCpu)));
    line("server CPU per delivery in the burst, µs", num((r) => r.serverCpuMicros, 2), b && w ? fmt(b.serverCpuMicros / w.serverCpuMicros, 2) : "");
    line("p50 publish-to-delivery, ms", num((r) => r.p50, 2), b && w ? fmt(b.p50 / w.p50, 2) : "");
    const p99Ratio = b && w ? b.p99 / w.p99 : undefined;
    const p99Target = [
      p99Ratio === undefined ? `<= ${TARGETS.p99VsWs}x ws` : `<= ${TARGETS.p99VsWs}x ws ${verdict(p99Ratio <= TARGETS.p99VsWs)}`,
      b && s ? `< Socket.IO ${verdict(b.p99 < s.p99)}` : "< Socket.IO",
    ].join(", ");
    line("p99 publish-to-delivery, ms", num((r) => r.p99, 2), fmt(p99Ratio, 2), p99Target);
    line("bottleneck during the latency phase", text((r) => r.latencyBottleneck));
    line("CPU during the latency phase, cores", text((r) => cores(r.latencyCpu)));
    const rssKb = b ? b.perConnRss / 1024 : undefined;
    line("server memory per idle connection, KB (RSS)", num((r) => r.perConnRss / 1024, 1), "", rssKb === undefined ? `<= ${TARGETS.rssKb}` : `<= ${TARGETS.rssKb} ${verdict(rssKb <= TARGETS.rssKb)}`);
    line("server heap per idle connection, KB", num((r) => r.perConnHeap / 1024, 1));
    line("JetStream consumers in use", num((r) => r.consumers, 0));
    line("connect + subscribe all, s", num((r) => r.connectMs / 1000, 1));
    line("deliveries complete (latency, burst)", num((r) => (r.latencyDelivered === r.latencyExpected && r.burstDelivered === r.burstExpected ? 1 : 0), 0));
  }
  console.log("\n(the last row is 1 when every expected delivery arrived in both phases; CPU in cores = CPU seconds per wall second, load generators summed)");
}

/** One storm: the resume's outcome, each process's CPU and the server's CPU per resuming client. */
export interface StormStage extends Resumed {
  cpu: CpuShare[];
  bottleneck: string;
  /** Server CPU per resuming client, ms. */
  serverCpuMs: number;
  /** Connections the machine dropped on a full listen queue during the storm (every process's, TcpExt ListenOverflows). */
  overflows: number;
}

export interface StormResult extends StormStage {
  follow: number;
  replay: number;
  peak: number;
  /** The same storm against a raw `ws` server sending the same frames from memory (the floor). */
  raw?: StormStage;
}

export function printStorm(r: StormResult, clients: number, behind: number): void {
  const w = r.raw;
  console.log(`\n### Resume storm: ${clients.toLocaleString("en-US")} clients, each ${behind} events behind, reconnect at once to a restarted bridge (and to a raw \`ws\` server)\n`);
  console.log("| measure | bridge | raw ws | bridge / raw ws | target |");
  console.log("|:--|--:|--:|--:|:--|");
  const row = (name: string, f: (s: StormStage) => string, ratio: (s: StormStage) => number = () => Number.NaN, target = "") =>
    console.log(`| ${name} | ${f(r)} | ${w ? f(w) : "-"} | ${w && !Number.isNaN(ratio(r)) ? fmt(ratio(r) / ratio(w), 2) : ""} | ${target} |`);
  const perSecond = (s: StormStage) => (s.min === s.max ? s.min * clients : s.delivered) / (s.ms / 1000);
  row("time until all caught up, s", (s) => (s.ms / 1000).toFixed(2), (s) => s.ms, `< ${TARGETS.stormSeconds} ${verdict(r.ms / 1000 < TARGETS.stormSeconds)} (bridge)`);
  row("phases: last socket open / first caught up / last caught up, s", (s) => [s.lastOpen, s.firstCaughtUp, s.lastCaughtUp].map((v) => (v / 1000).toFixed(2)).join(" / "));
  row("CPU during the storm, cores", (s) => cores(s.cpu));
  row("server CPU per resuming client, ms", (s) => fmt(s.serverCpuMs, 2), (s) => s.serverCpuMs);
  row("bottleneck during the storm", (s) => s.bottleneck);
  row("listen queue overflows (machine-wide)", (s) => fmt(s.overflows));
  row("events replayed per client (min / max)", (s) => `${s.min} / ${s.max}`, undefined, `${behind} / ${behind}`);
  row("subscriptions that failed", (s) => String(s.failed), undefined, "0");
  row("frames delivered per second during the storm", (s) => Math.round(perSecond(s)).toLocaleString("en-US"), perSecond);
  console.log(`| consumers created (follow + replay calls) | ${r.follow + r.replay} (${r.follow} follow, ${r.replay} replay) | - |  |  |`);
  console.log(`| peak JetStream consumers during the storm | ${r.peak} | - |  |  |`);
}
