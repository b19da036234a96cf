/** Child processes of the fan-out benchmark (tsx + the source condition) and their IPC replies. */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const tsx = import.meta.resolve("tsx");

export interface Proc {
  child: ChildProcess;
  /** Sends a message and resolves with the next reply whose `cmd` is `reply`. */
  ask<T = Record<string, unknown>>(msg: Record<string, unknown>, reply: string, timeoutMs?: number): Promise<T>;
  /** Resolves with the next message whose `cmd` is `reply`. */
  wait<T = Record<string, unknown>>(reply: string, timeoutMs?: number): Promise<T>;
}

/**
 * Forks `file` under tsx. With `dist`, workspace packages resolve to their built `dist/` (as an
 * installed package would) instead of their TypeScript sources: tsx compiles with esbuild's
 * keepNames, which gives every per-connection closure a slow property array and would inflate
 * the server's memory per connection by a few KB.
 */
export function start(file: string, args: string[], execArgv: string[] = [], dist = false): Proc {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), args, {
    execArgv: [...(dist ? [] : ["--conditions=@tidemark/source"]), "--import", tsx, ...execArgv],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const wait = <T>(reply: string, timeoutMs = 120_000) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${file}: no ${reply} in ${timeoutMs} ms`)), timeoutMs);
      const onExit = (code: number | null) => reject(new Error(`${file} exited (${code}) before ${reply}`));
      const onMessage = (m: { cmd: string }) => {
        if (m.cmd !== reply) return;
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(m as T);
      };
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  return {
    child,
    wait,
    ask<T>(msg: Record<string, unknown>, reply: string, timeoutMs?: number) {
      const p = wait<T>(reply, timeoutMs);
      child.send(msg);
      return p;
    },
  };
}
