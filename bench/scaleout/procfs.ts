/** What the scale-out benchmark reads from /proc: resident sizes, kernel socket memory, the open-files limit. */
import { readFileSync } from "node:fs";

/** Resident set size of `pid` in bytes (0 when the process is gone). */
export function rssBytes(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** TCP sockets in use and kernel memory of TCP sockets in bytes (`/proc/net/sockstat`: `mem` counts pages). */
export function sockstat(): { inuse: number; memBytes: number } {
  const tcp = /TCP: inuse (\d+) .* mem (\d+)/.exec(readFileSync("/proc/net/sockstat", "utf8"));
  return { inuse: Number(tcp?.[1] ?? 0), memBytes: Number(tcp?.[2] ?? 0) * 4096 };
}

/** The soft open-files limit of this process (children inherit it). */
export function openFilesLimit(): number {
  const line = /Max open files\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"));
  return Number(line?.[1] ?? 1024);
}

/**
 * The machine's CPU time so far (`/proc/stat`, first line, in clock ticks): busy (user, nice,
 * system, irq, softirq, steal) and all. Two readings give how full the cores were between them,
 * including what no process of the run is charged with (the kernel's softirqs, other processes).
 */
export function machineTicks(): { busy: number; total: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, total: busy + idle! + iowait! };
}
