/** Child processes for the packaging check: run to the end, or start and stop a server. */
import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";

/** The environment without what pnpm puts there for its own scripts (npm must see none of it). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_|^pnpm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Runs a command; rejects with its output when it fails. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (out += d));
    child.on("error", reject);
    // close, not exit: the output may still be in the pipe when the process has exited.
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${code}:\n${out.slice(-4000)}`))));
  });
}

/** Runs a command to its end and returns its exit code and output, whatever the code. */
export function runExit(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running child in its own process group, so that stop() also ends what it spawned. */
export class Server {
  private output = "";
  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => (this.output += d));
    child.stderr?.on("data", (d: Buffer) => (this.output += d));
  }

  static start(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Server {
    return new Server(spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] }));
  }

  get log(): string {
    return this.output;
  }

  /** Resolves with the first stdout line that parses as JSON. */
  async readyLine<T>(timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const line of this.output.split("\n")) {
        if (line.startsWith("{")) return JSON.parse(line) as T;
      }
      if (this.child.exitCode !== null) break;
      await sleep(100);
    }
    throw new Error(`no ready line; output:\n${this.output.slice(-4000)}`);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** A signal to the process alone, or to its whole process group (`kill -SIG -PGID`). */
  signal(signal: NodeJS.Signals, target: "process" | "group"): void {
    process.kill(target === "group" ? -this.pid : this.pid, signal);
  }

  /**
   * Resolves when stdout and stderr are closed: every process that inherited them has exited
   * (npx's grandchildren included), not only the child.
   */
  async closed(timeoutMs: number): Promise<void> {
    const ended = (s: NodeJS.ReadableStream | null) => new Promise<void>((r) => (s && !(s as { closed?: boolean }).closed ? s.once("close", () => r()) : r()));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`output still open ${timeoutMs} ms after the signal:\n${this.output.slice(-4000)}`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.all([ended(this.child.stdout), ended(this.child.stderr)]), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The child's exit code (or 128 + signal number when a signal ended it). */
  async exitCode(): Promise<number> {
    if (this.child.exitCode === null && this.child.signalCode === null) await new Promise((r) => this.child.once("exit", r));
    return this.child.exitCode ?? 128 + (constants.signals[this.child.signalCode!] ?? 0);
  }

  /** SIGTERM to the group, SIGKILL after a grace period. */
  async stop(graceMs = 5_000): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      try {
        process.kill(-pid, "SIGKILL"); // what the child left in its group (npx's grandchildren)
      } catch {
        /* the group is gone */
      }
      return;
    }
    const exited = new Promise((r) => this.child.once("exit", r));
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }, graceMs);
    await exited;
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `url` until it answers 200. */
export async function waitForOk(url: string, timeoutMs: number, server: Server): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms; output:\n${server.log.slice(-4000)}`);
}
