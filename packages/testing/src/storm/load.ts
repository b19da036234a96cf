/**
 * The crash storm's users, spread over load-generator child processes (`loadgen.ts`): user k
 * goes to process k % count and first to bridge k % bridges, each process opening from its own
 * loopback source addresses. Merges the processes' status, latency and accounting.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { StormKind } from "./client.js";

/** Stream sequences acknowledged per tenant of each topic: what each subscriber must receive. */
export interface Expected {
  personal: Record<string, number[]>;
  group: Record<string, number[]>;
}

export interface LoadStatus {
  clients: number;
  /** Clients whose every subscription is caught up on an open socket. */
  ready: number;
  /** Ready clients per bridge index. */
  perBridge: number[];
  /** Latest time a client became ready (ms since the epoch). */
  lastReadyAt: number;
  reconnects: number;
  drains: number;
  troubles: number;
  /** `reset`/`error`/`unsubscribed` frames by `type:code` (`reset:<reason>`). */
  troubleKinds: Record<string, number>;
  /** Close codes of lost sockets, counted. */
  closeCodes: Record<string, number>;
}

export interface StormAccount {
  expected: number;
  delivered: number;
  lost: number;
  doubled: number;
  unexpected: number;
  outOfOrder: number;
  resets: number;
  /** A few of the `reset`/`error`/`unsubscribed` frames seen, for the failure message. */
  troubles: unknown[];
}

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const entry = fileURLToPath(new URL("./loadgen.ts", import.meta.url));

class Loadgen {
  readonly child: ChildProcess;
  constructor() {
    this.child = fork(entry, [], { cwd: repoRoot, execArgv: ["--conditions=@tidemark/source", "--import", "tsx", ...(process.env.STORM_LOADGEN_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.STORM_LOADGEN_PROFILE_DIR}`] : [])], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  }

  /** Resolves with the next message whose `cmd` is `reply` (after sending `msg`, if any). */
  ask<T>(msg: Record<string, unknown> | undefined, reply: string, timeoutMs = 120_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`load generator: no ${reply} in ${timeoutMs} ms`)), timeoutMs);
      const onExit = (code: number | null) => done(new Error(`load generator exited (${code}) before ${reply}`));
      const onMessage = (m: { cmd: string }) => m.cmd === reply && done(undefined, m as T);
      const done = (err: Error | undefined, value?: T) => {
        clearTimeout(timer);
        this.child.off("message", onMessage).off("exit", onExit);
        if (err) reject(err);
        else resolve(value!);
      };
      this.child.on("message", onMessage).once("exit", onExit);
      if (msg) this.child.send(msg);
    });
  }
}

export interface StormLoadOptions {
  /** Load-generator processes. */
  processes: number;
  /** Loopback source addresses per process (`127.0.<p+1>.<i+1>`). @default 2 */
  addressesPerProcess?: number;
}

/**
 * @example await using load = await StormLoad.start({ processes: 2 });
 *          await load.open("tidemark", bridges.map((b) => b.wsUrl), 2_000, 50);
 */
export class StormLoad {
  readonly #procs: Loadgen[];
  readonly #addresses: number;
  #bridges = 0;

  private constructor(procs: Loadgen[], addresses: number) {
    this.#procs = procs;
    this.#addresses = addresses;
  }

  static async start(o: StormLoadOptions): Promise<StormLoad> {
    const procs = Array.from({ length: o.processes }, () => new Loadgen());
    const load = new StormLoad(procs, o.addressesPerProcess ?? 2);
    try {
      await Promise.all(procs.map((p) => p.ask(undefined, "ready", 60_000)));
    } catch (err) {
      for (const p of procs) p.child.kill("SIGKILL");
      throw err;
    }
    return load;
  }

  get pids(): number[] {
    return this.#procs.map((p) => p.child.pid!);
  }

  /** Opens users 0..n-1 (user k in group k % groups); resolves with the ms until all were ready. */
  async open(kind: StormKind, urls: string[], n: number, groups: number, o: { wave?: number; timeoutMs?: number } = {}): Promise<number> {
    this.#bridges = urls.length;
    const started = Date.now();
    const count = this.#procs.length;
    await Promise.all(
      this.#procs.map((p, i) => {
        const users: number[] = [];
        for (let k = i; k < n; k += count) users.push(k);
        const addresses = Array.from({ length: this.#addresses }, (_, a) => `127.0.${i + 1}.${a + 1}`);
        return p.ask({ cmd: "open", kind, urls, users, groups, addresses, wave: o.wave ?? 500 }, "opened", o.timeoutMs ?? 600_000);
      }),
    );
    return Date.now() - started;
  }

  async status(): Promise<LoadStatus> {
    const rs = await Promise.all(this.#procs.map((p) => p.ask<LoadStatus>({ cmd: "status", bridges: this.#bridges }, "status")));
    const sum = (f: (r: LoadStatus) => number) => rs.reduce((n, r) => n + f(r), 0);
    return {
      clients: sum((r) => r.clients),
      ready: sum((r) => r.ready),
      perBridge: rs[0]!.perBridge.map((_, b) => sum((r) => r.perBridge[b]!)),
      lastReadyAt: Math.max(...rs.map((r) => r.lastReadyAt)),
      reconnects: sum((r) => r.reconnects),
      drains: sum((r) => r.drains),
      troubles: sum((r) => r.troubles),
      troubleKinds: merge(rs.map((r) => r.troubleKinds)),
      closeCodes: merge(rs.map((r) => r.closeCodes)),
    };
  }

  /** Per load generator: how many clients are ready on a socket opened after `since`, and p50/p90/max ms of open -> welcome and welcome -> ready. */
  async phases(since: number): Promise<{ n: number; welcome: number[]; ready: number[] }[]> {
    return Promise.all(this.#procs.map((p) => p.ask<{ n: number; welcome: number[]; ready: number[] }>({ cmd: "phases", since }, "phases")));
  }

  /** Starts (`on`) or stops recording latency; returns what was recorded since the last call, as sparse [ms, count]. */
  async latency(on: boolean): Promise<[number, number][]> {
    const rs = await Promise.all(this.#procs.map((p) => p.ask<{ sparse: [number, number][] }>({ cmd: "latency", on }, "latency")));
    const merged = new Map<number, number>();
    for (const r of rs) for (const [ms, n] of r.sparse) merged.set(ms, (merged.get(ms) ?? 0) + n);
    return [...merged].sort((a, b) => a[0] - b[0]);
  }

  /** Counts every client's events against `expected`. */
  async account(expected: Expected): Promise<StormAccount> {
    const rs = await Promise.all(this.#procs.map((p) => p.ask<StormAccount>({ cmd: "account", expected }, "account", 300_000)));
    const out: StormAccount = { expected: 0, delivered: 0, lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0, troubles: [] };
    for (const r of rs) {
      for (const k of ["expected", "delivered", "lost", "doubled", "unexpected", "outOfOrder", "resets"] as const) out[k] += r[k];
      out.troubles.push(...r.troubles);
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.#procs.map((p) => (p.child.exitCode === null ? p.ask({ cmd: "close" }, "closed", 30_000).catch(() => p.child.kill("SIGKILL")) : undefined)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function merge(counts: Record<string, number>[]): Record<string, number> {
  const m: Record<string, number> = {};
  for (const c of counts) for (const [k, n] of Object.entries(c)) m[k] = (m[k] ?? 0) + n;
  return m;
}

/** Quantile `q` of a sparse [ms, count] histogram (NaN when empty). */
export function quantileOf(sparse: [number, number][], q: number): number {
  const total = sparse.reduce((n, [, c]) => n + c, 0);
  let seen = 0;
  for (const [ms, c] of sparse) if ((seen += c) >= Math.ceil(q * total)) return ms;
  return Number.NaN;
}
