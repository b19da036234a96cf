/** Stops a nats-server left behind by a parent that was killed before it could stop it. */
import { readFileSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

// A zombie still answers kill(pid, 0) but holds no ports or files; its parent may never reap
// it (a hung parent, an init that does not wait), so waiting for it to vanish could hang.
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return process.platform !== "linux";
  }
}

function isNatsServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("nats-server");
  } catch {
    // No /proc (macOS): trust the pid file, which only nats-server writes.
    return process.platform !== "linux";
  }
}

/**
 * Reads `${dir}/nats-server.pid`; when it names a live nats-server, stops it (TERM, then KILL
 * after `graceMs`). Returns the pid it stopped, if any.
 */
export async function stopStaleServer(dir: string, graceMs = 5_000): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(`${dir}/nats-server.pid`, "utf8").trim(), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 1 || !alive(pid) || !isNatsServer(pid)) {
    rmSync(`${dir}/nats-server.pid`, { force: true });
    return undefined;
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, "SIGKILL");
  while (alive(pid)) await sleep(20);
  rmSync(`${dir}/nats-server.pid`, { force: true });
  return pid;
}
