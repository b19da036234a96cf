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

  constructor(procs: { name: string; pid: number | undefined }[]) {
    this.#procs = procs.filter((p): p is { name: string; pid: number } => p.pid !== undefined);
  }

  start(): void {
    this.#at = performance.now();
    this.#start = this.#procs.map((p) => cpuSeconds(p.pid));
  }

  stop(): CpuShare[] {
    const wall = (performance.now() - this.#at) / 1000;
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
 * thread for JavaScript) busy most of the time; "cpu (machine)" when all together used the
 * machine's cores; else "none".
 */
export function bottleneck(shares: CpuShare[], cores: number, perProcess: CpuShare[]): string {
  const busiest = [...perProcess].sort((a, b) => b.cores - a.cores)[0];
  if (busiest && busiest.cores >= 0.85) return `${busiest.name} (${Math.round(busiest.cores * 100)}% of a core)`;
  const total = shares.reduce((s, x) => s + x.cores, 0);
  if (total >= 0.85 * cores) return `machine (${total.toFixed(1)} of ${cores} cores)`;
  return busiest ? `none saturated (top: ${busiest.name} ${Math.round(busiest.cores * 100)}%)` : "-";
}

/** "server 0.92, load 0.71, nats 0.30, publisher 0.12" */
export function formatShares(shares: CpuShare[]): string {
  return shares.map((s) => `${s.name} ${s.cores.toFixed(2)}`).join(", ");
}
