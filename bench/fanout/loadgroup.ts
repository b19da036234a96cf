/**
 * The load generator split over several processes (FANOUT_LOADGENS, default 2): one process
 * parsing every frame of 10,000 sockets saturates its core before the server does. Each
 * process opens an equal share of the clients (client k of the run goes to process k % count)
 * and counts its own deliveries; the replies are merged.
 */
import { start, type Proc } from "./procs.js";
import { Histogram, type Impl } from "./shared.js";

export interface Delivered {
  delivered: number;
  firstAt: number;
  lastAt: number;
  hist: Histogram;
}

/** A resume storm's outcome; the phase times are ms from each process's start of the storm. */
export interface Resumed {
  ms: number;
  min: number;
  max: number;
  delivered: number;
  failed: number;
  /** The last socket opened (TCP + upgrade done). */
  lastOpen: number;
  firstCaughtUp: number;
  lastCaughtUp: number;
}

export class LoadGroup {
  readonly procs: Proc[];
  /** Clients opened in each process so far. */
  readonly #open: number[];

  /** `localAddresses`: loopback source addresses to spread clients over (port exhaustion past ~28,000 per address). */
  constructor(
    count: number,
    readonly localAddresses: string[] = [],
    execArgv: string[] = [],
  ) {
    this.procs = Array.from({ length: count }, (_, i) => start("./load.ts", [String(i)], execArgv));
    this.#open = this.procs.map(() => 0);
  }

  get pids(): (number | undefined)[] {
    return this.procs.map((p) => p.child.pid);
  }

  async ready(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.wait("ready")));
  }

  /** Opens clients `offset .. offset+n-1` (tenant = index % tenants); resolves with the wall time in ms. */
  async connect(impl: Impl, port: number, n: number, tenants: number, offset = 0, timeoutMs = 180_000): Promise<number> {
    const t0 = performance.now();
    const count = this.procs.length;
    await Promise.all(
      this.procs.map((p, i) => {
        // clients offset+i, offset+i+count, ...: the process's share
        const share = Math.floor(n / count) + (i < n % count ? 1 : 0);
        this.#open[i]! += share;
        const localAddresses = this.localAddresses.filter((_, k) => k % count === i);
        return p.ask({ cmd: "connect", impl, port, n: share, tenants, offset: offset + i, stride: count, localAddresses: localAddresses.length > 0 ? localAddresses : this.localAddresses }, "connected", timeoutMs);
      }),
    );
    return performance.now() - t0;
  }

  /**
   * Starts counting in every process; `perClient` deliveries are expected per open client.
   * Resolves once all are counting; `done` resolves with the merged result.
   */
  async expect(perClient: number, timeoutMs: number): Promise<{ done: Promise<Delivered> }> {
    const replies = this.procs.map((p, i) =>
      p.ask<{ delivered: number; firstAt: number; lastAt: number; hist: [number, number][] }>({ cmd: "expect", count: perClient * this.#open[i]!, timeoutMs }, "delivered", timeoutMs + 30_000),
    );
    await Promise.all(this.procs.map((p) => p.wait("expecting")));
    const done = Promise.all(replies).then((rs) => {
      const hist = new Histogram();
      for (const r of rs) hist.merge(Histogram.from(r.hist));
      const firsts = rs.map((r) => r.firstAt).filter((t) => t > 0);
      return {
        delivered: rs.reduce((s, r) => s + r.delivered, 0),
        firstAt: firsts.length > 0 ? Math.min(...firsts) : 0,
        lastAt: Math.max(...rs.map((r) => r.lastAt)),
        hist,
      };
    });
    return { done };
  }

  async disconnect(keep = false): Promise<void> {
    await Promise.all(this.procs.map((p) => p.ask({ cmd: "disconnect", keep }, "disconnected")));
    if (!keep) this.#open.fill(0);
  }

  /** Every kept client reconnects at once with its cursor (the resume storm). */
  async resume(port: number, timeoutMs = 120_000): Promise<Resumed> {
    const t0 = performance.now();
    const rs = await Promise.all(this.procs.map((p) => p.ask<Omit<Resumed, "ms">>({ cmd: "resume", port }, "resumed", timeoutMs)));
    return {
      ms: performance.now() - t0,
      min: Math.min(...rs.map((r) => r.min)),
      max: Math.max(...rs.map((r) => r.max)),
      delivered: rs.reduce((s, r) => s + r.delivered, 0),
      failed: rs.reduce((s, r) => s + r.failed, 0),
      lastOpen: Math.max(...rs.map((r) => r.lastOpen)),
      firstCaughtUp: Math.min(...rs.map((r) => r.firstCaughtUp)),
      lastCaughtUp: Math.max(...rs.map((r) => r.lastCaughtUp)),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.ask({ cmd: "close" }, "closed")));
  }
}
