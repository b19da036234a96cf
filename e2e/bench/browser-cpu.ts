/**
 * CPU time used by the browser this process launched (every Chromium process: browser, GPU,
 * renderers with their SharedWorker), from /proc. Unlike wall time it hardly moves with the
 * load of other work on the machine. Linux only; 0 elsewhere.
 */
import { readFileSync, readdirSync } from "node:fs";

const TICK_MS = 10; // USER_HZ is 100 on Linux

function stat(path: string): { ppid: number; comm: string; ticks: number } | undefined {
  try {
    const text = readFileSync(`${path}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    // After the name: state ppid ... utime (14th field overall) stime (15th).
    return { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** The processes under this Node process: Chromium's (`chromium`) or the others (`!chromium`). */
function descendants(chromium = true): number[] {
  const procs = new Map<number, { ppid: number; comm: string }>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(`/proc/${pid}`);
    if (s) procs.set(pid, s);
  }
  const under = (pid: number): boolean => {
    for (let p = procs.get(pid)?.ppid; p !== undefined && p > 1; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  return [...procs].filter(([pid, s]) => /chrom/i.test(s.comm) === chromium && under(pid)).map(([pid]) => pid);
}

/** Milliseconds of CPU used so far by the Chromium processes under this Node process. */
export function browserCpuMs(): number {
  if (process.platform !== "linux") return 0;
  let ticks = 0;
  for (const pid of descendants()) ticks += stat(`/proc/${pid}`)?.ticks ?? 0;
  return ticks * TICK_MS;
}

/**
 * Milliseconds of CPU used so far by this Node process's other children: the demo server and
 * its embedded nats-server (and the tsx/pnpm wrappers, which are idle).
 */
export function serverCpuMs(): number {
  if (process.platform !== "linux") return 0;
  let ticks = 0;
  for (const pid of descendants(false)) ticks += stat(`/proc/${pid}`)?.ticks ?? 0;
  return ticks * TICK_MS;
}

/** `--type=` of a Chromium process: renderer, gpu-process, utility, zygote; "browser" for the main one. */
function processType(pid: number): string {
  try {
    // Chromium rewrites its command line as one space-separated string (setproctitle).
    return /--type=(\S+)/.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8"))?.[1] ?? "browser";
  } catch {
    return "?";
  }
}

/**
 * CPU so far per process type and thread name ("renderer/CrRendererMain", "renderer/DedicatedWorker
 * thread", "gpu-process/VizCompositorTh"...), in ms: subtract two readings to see which part of
 * the browser a burst costs. Threads that ended in between are missing from the later reading.
 */
export function browserCpuByThread(): Map<string, number> {
  const out = new Map<string, number>();
  if (process.platform !== "linux") return out;
  for (const pid of descendants()) {
    const type = processType(pid);
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const s = stat(`/proc/${pid}/task/${tid}`);
      if (!s) continue;
      const key = `${type}/${s.comm}`;
      out.set(key, (out.get(key) ?? 0) + s.ticks * TICK_MS);
    }
  }
  return out;
}

/** `after - before` per key, largest first, zeros left out. */
export function cpuDelta(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([k, v]): [string, number] => [k, v - (before.get(k) ?? 0)])
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
}
