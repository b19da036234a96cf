/**
 * Freezing a server process for fault tests. kill(SIGSTOP) returns before the process stops:
 * the kernel stops a process when one of its threads is next scheduled and takes the signal,
 * and only then tells the other threads to stop. On a loaded machine a Go server's running
 * threads go on serving (an ack included) for milliseconds after kill() returned. So wait
 * until every thread is shown stopped (Linux /proc).
 */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** State letters of the process's threads ("T" stopped, "R" running, ...). */
function threadStates(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // "tid (comm) state ...": comm may hold spaces and parentheses, so read after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  });
}

/** Sends SIGSTOP and resolves once every thread of `pid` is stopped. */
export async function freeze(pid: number, timeoutMs = 10_000): Promise<void> {
  process.kill(pid, "SIGSTOP");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = threadStates(pid);
    if (states.every((s) => s === "T")) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} did not stop within ${timeoutMs} ms (threads: ${states.join("")})`);
    await sleep(2);
  }
}

/** Sends SIGCONT (harmless when the process is not stopped). */
export function thaw(pid: number): void {
  process.kill(pid, "SIGCONT");
}
