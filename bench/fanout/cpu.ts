/**
 * CPU time of the benchmark's processes (server, load generators, nats-server, this publisher)
 * over a phase, from /proc/<pid>/stat, so each fan-out figure can say which process limited it:
 * a ratio taken while the load generator saturates a core measures the generator.
 */
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User + system CPU seconds of `pid` so far; NaN where /proc is not readable. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the parenthesised command name: state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Busy CPU seconds of the whole machine so far (every process, all cores), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export interface CpuShare {
  name: string;
  /** Cores used on average over the phase (1 = one core busy all the time). */
  cores: number;
}

/** Samples each named process at `start()` and returns their CPU use per wall second at `stop()`. */
export class CpuSampler {
  readonly #procs: { name: string; pid: number }[];
  #at = 0;
  #start: number[] = [];
  #machine = 0;
  /** Cores the whole machine used over the last phase (other people's work included). */
  machineCores = Number.NaN;
  /** Wall seconds of the last phase. */
  seconds = Number.NaN;

  constructor(procs: { name: string; pid: number | undefined }[]) {
    this.#procs = procs.filter((p): p is { name: string; pid: number } => p.pid !== undefined);
  }

  start(): void {
    this.#at = performance.now();
    this.#start = this.#procs.map((p) => cpuSeconds(p.pid));
    this.#machine = machineBusySeconds();
  }

  stop(): CpuShare[] {
    const wall = (this.seconds = (performance.now() - this.#at) / 1000);
    this.machineCores = (machineBusySeconds() - this.#machine) / wall;
    return this.#procs.map((p, i) => ({ name: p.name, cores: (cpuSeconds(p.pid) - this.#start[i]!) / wall }));
  }
}

/** Sums the shares of processes with the same name (several load generators count as one side). */
export function byName(shares: CpuShare[]): CpuShare[] {
  const out = new Map<string, number>();
  for (const s of shares) out.set(s.name, (out.get(s.name) ?? 0) + s.cores);
  return [...out].map(([name, cores]) => ({ name, cores }));
}

/**
 * Names the bottleneck of a phase: the process that kept one core (a Node process is one
 * thread for JavaScript) busy most of the time; else "machine" when the machine's cores were
 * busy (with `machineCores` from the sampler: how much of that was other people's work); else
 * "none saturated" with the busiest process.
 */
export function bottleneck(shares: CpuShare[], cores: number, perProcess: CpuShare[], machineCores = Number.NaN): string {
  const busiest = [...perProcess].sort((a, b) => b.cores - a.cores)[0];
  if (busiest && busiest.cores >= 0.85) return `${busiest.name} (${Math.round(busiest.cores * 100)}% of a core)`;
  const ours = shares.reduce((s, x) => s + x.cores, 0);
  const machine = Number.isNaN(machineCores) ? ours : Math.max(machineCores, ours);
  if (machine >= 0.85 * cores) return `machine (${machine.toFixed(1)} of ${cores} cores busy, ${ours.toFixed(1)} by this run)`;
  return busiest ? `none saturated (top: ${busiest.name} ${Math.round(busiest.cores * 100)}%)` : "-";
}

/** "server 0.92, load 0.71, nats 0.30, publisher 0.12" */
export function formatShares(shares: CpuShare[]): string {
  return shares.map((s) => `${s.name} ${s.cores.toFixed(2)}`).join(", ");
}

/** The machine's count of connections dropped because a listen queue was full (TcpExt ListenOverflows); NaN where unreadable. */
export function listenOverflows(): number {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n").filter((l) => l.startsWith("TcpExt:"));
    const [names, values] = lines.map((l) => l.trim().split(/\s+/));
    const i = names!.indexOf("ListenOverflows");
    return i < 0 ? Number.NaN : Number(values![i]);
  } catch {
    return Number.NaN;
  }
}
