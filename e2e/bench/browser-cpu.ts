/**
 * CPU time used by the browser this process launched (every Chromium process: browser, GPU,
 * renderers with their SharedWorker), from /proc. Unlike wall time it hardly moves with the
 * load of other work on the machine. Linux only; 0 elsewhere.
 */
import { readFileSync, readdirSync } from "node:fs";

const TICK_MS = 10; // USER_HZ is 100 on Linux

function stat(pid: number): { ppid: number; comm: string; ticks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    // After the name: state ppid ... utime (14th field overall) stime (15th).
    return { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** Milliseconds of CPU used so far by the Chromium processes under this Node process. */
export function browserCpuMs(): number {
  if (process.platform !== "linux") return 0;
  const procs = new Map<number, { ppid: number; comm: string; ticks: number }>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) procs.set(pid, s);
  }
  const under = (pid: number): boolean => {
    for (let p = procs.get(pid)?.ppid; p !== undefined && p > 1; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, s] of procs) if (/chrom/i.test(s.comm) && under(pid)) ticks += s.ticks;
  return ticks * TICK_MS;
}
