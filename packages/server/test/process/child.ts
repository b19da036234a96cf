/** Spawns {@link ./child-worker.ts} with tsx and follows its output lines. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import type { ChildConfig } from "./child-worker.js";

export interface ChildLine {
  type: "ready" | "start" | "done" | "fail" | "closed" | "waiting" | "stop-timeout";
  seq?: number;
  attempt?: number;
  data?: unknown;
  pid?: number;
  /** Error code of a "stop-timeout" line. */
  code?: string;
}

export interface ChildWorker {
  readonly lines: ChildLine[];
  readonly process: ChildProcess;
  /** Resolves with the first line (seen or future) that matches. */
  waitFor(match: (line: ChildLine) => boolean, timeoutMs?: number): Promise<ChildLine>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Lets a child started with `waitForGo` start its worker; resolves when it has. */
  go(): Promise<void>;
  /** Resolves when the process has exited by itself. */
  readonly exited: Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../..");
const script = fileURLToPath(new URL("./child-worker.ts", import.meta.url));

export async function spawnWorker(cfg: ChildConfig): Promise<ChildWorker> {
  // node itself with tsx's loader: the tsx CLI would put a second process between us and the
  // worker, and a SIGKILL would hit only the wrapper.
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@tidemark/source", script], {
    cwd: root,
    env: { ...process.env, TIDEMARK_TEST_WORKER: JSON.stringify(cfg) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: ChildLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let i;
    while ((i = buffer.indexOf("\n")) >= 0) {
      const text = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (text.startsWith("{")) lines.push(JSON.parse(text) as ChildLine);
    }
    for (const w of [...waiters]) w();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const waitFor = (match: (line: ChildLine) => boolean, timeoutMs = 20_000) =>
    new Promise<ChildLine>((resolveLine, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (found) {
          clearTimeout(timer);
          waiters.delete(check);
          resolveLine(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`child worker: no matching line after ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => {
        if (waiters.has(check)) {
          check();
          if (waiters.has(check)) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`child worker exited; stderr: ${stderr}`));
          }
        }
      });
      check();
    });
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const go = async () => {
    child.stdin.write("go\n");
    await waitFor((l) => l.type === "ready", 30_000);
  };
  const handle: ChildWorker = { lines, process: child, waitFor, kill, exited, go, [Symbol.asyncDispose]: () => kill("SIGKILL") };
  await waitFor((l) => l.type === (cfg.waitForGo ? "waiting" : "ready"), 30_000);
  return handle;
}
