/** Stops a nats-server left behind by a parent that was killed before it could stop it. */
import { readFileSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, TidemarkError } from "@tidemark/shared";

/** Another live process runs a managed nats-server on this data directory. */
export class DataDirInUseError extends TidemarkError {
  constructor(message: string) {
    super(ErrorCode.InvalidArgument, message);
    this.name = "DataDirInUseError";
  }
}

/**
 * @internal True while `pid` is a live process. A zombie still answers kill(pid, 0) but holds
 * no ports or files; its parent may never reap it (a hung parent, an init that does not wait),
 * so it counts as gone — waiting for it to vanish could hang.
 */
export function alive(pid: number): boolean {
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

function parentOf(pid: number): number | undefined {
  try {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "", 10);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** The watchdog shell of server.ts, recognised by its script. */
export const WATCHDOG_MARK = "exec 3<&0";

function isWatchdog(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(WATCHDOG_MARK);
  } catch {
    return false;
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
  // A server whose watchdog still has its owner is in use, not stale: stopping it would pull
  // the broker from under a running application. When the owner just died, its watchdog is
  // already stopping the server: give it the grace period.
  const shell = parentOf(pid);
  if (shell !== undefined && isWatchdog(shell)) {
    const owner = parentOf(shell);
    if (owner !== undefined && owner > 1 && alive(owner)) {
      throw new DataDirInUseError(
        `the data directory ${dir} is in use: nats-server pid ${pid} runs for process ${owner}. ` +
          `Stop that process or give this one another data directory (TIDEMARK_DATA_DIR or --data).`,
      );
    }
    const until = Date.now() + graceMs;
    while (alive(pid) && Date.now() < until) await sleep(50);
    if (!alive(pid)) {
      rmSync(`${dir}/nats-server.pid`, { force: true });
      return pid;
    }
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, "SIGKILL");
  while (alive(pid)) await sleep(20);
  rmSync(`${dir}/nats-server.pid`, { force: true });
  return pid;
}
