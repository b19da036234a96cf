// What probe.mjs and floor.mjs read of the processes they measure.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A loopback port free now. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** utime + stime of a process, in seconds (as bench/fanout/cpu.ts reads them, for plain node). */
export const cpu = (pid) => {
  // The command may hold ") ": the fields after the last one are fixed.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
};

/** Resident set size of a process, in bytes. */
export const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;
