/**
 * The routes of a test cluster through fault proxies: for every ordered pair (a, b) a proxy
 * that a's route to b dials, forwarding to b's cluster port. Both proxies of a pair make the
 * link between a and b; a one-way cut of a -> b holds what a sends on either route connection
 * ("up" on a's own dial, "down" on b's dial to a).
 *
 * nats-server gossips each node's route address to the others, which dial it directly (seen on
 * 2.15: 2 of 12 route connections bypassed the proxies), and `cluster { no_advertise }` only
 * stops client URLs being gossiped. So every node advertises the mesh's sink instead: a
 * listener that ends whatever dials it and counts the attempts.
 */
import { createServer, type Server } from "node:net";
import { FaultProxy, type FaultOptions } from "./proxy.js";

export interface LinkFaultOptions {
  /** Only what `from` sends to the other node. @default both ways */
  from?: number;
  /** Heals by itself after this long. */
  forMs?: number;
}

export class RouteMesh {
  readonly size: number;
  /** proxies[a][b]: a dials it to reach b (undefined on the diagonal). */
  readonly proxies: (FaultProxy | undefined)[][];
  /** Dials of the advertised (gossiped) route address, each ended at once. */
  gossipDials = 0;
  readonly #sink: Server;

  private constructor(size: number, proxies: (FaultProxy | undefined)[][], sink: Server) {
    this.size = size;
    this.proxies = proxies;
    this.#sink = sink;
    sink.on("connection", (s) => {
      this.gossipDials++;
      s.destroy();
    });
  }

  /** What every node advertises as its route address: the sink. */
  get advertise(): string {
    return `127.0.0.1:${(this.#sink.address() as { port: number }).port}`;
  }

  /** One proxy per ordered pair of `clusterPorts`. */
  static async start(clusterPorts: number[], o: { maxFaultMs?: number } = {}): Promise<RouteMesh> {
    const size = clusterPorts.length;
    const proxies = await Promise.all(
      clusterPorts.map((_, a) =>
        Promise.all(clusterPorts.map((port, b) => (a === b ? undefined : FaultProxy.start({ targetPort: port, maxFaultMs: o.maxFaultMs })))),
      ),
    );
    const sink = createServer();
    await new Promise<void>((resolve, reject) => sink.once("error", reject).listen(0, "127.0.0.1", () => resolve()));
    return new RouteMesh(size, proxies, sink);
  }

  /** The route URLs node `a` is configured with (one per other node, each through its proxy). */
  routesOf(a: number): string[] {
    return this.proxies[a]!.flatMap((p) => (p ? [`nats-route://127.0.0.1:${p.port}`] : []));
  }

  /** Every proxy port (what a route's remote port must be). */
  get ports(): number[] {
    return this.proxies.flatMap((row) => row.flatMap((p) => (p ? [p.port] : [])));
  }

  #pair(a: number, b: number, o: LinkFaultOptions, apply: (p: FaultProxy, f: FaultOptions) => void): void {
    if (a === b) throw new RangeError(`no link from node ${a} to itself`);
    const ab = this.proxies[a]![b]!;
    const ba = this.proxies[b]![a]!;
    if (o.from === undefined) {
      apply(ab, { forMs: o.forMs });
      apply(ba, { forMs: o.forMs });
      return;
    }
    if (o.from !== a && o.from !== b) throw new RangeError(`node ${o.from} is not on the link ${a}-${b}`);
    const to = o.from === a ? b : a;
    apply(this.proxies[o.from]![to]!, { direction: "up", forMs: o.forMs });
    apply(this.proxies[to]![o.from]!, { direction: "down", forMs: o.forMs });
  }

  /** Cuts the link a-b (blackhole; `from`: one way only). */
  cut(a: number, b: number, o: LinkFaultOptions = {}): void {
    this.#pair(a, b, o, (p, f) => p.cut(f));
  }

  /** Delay and jitter on the link a-b. */
  delay(a: number, b: number, ms: number, jitterMs: number, o: LinkFaultOptions = {}): void {
    this.#pair(a, b, o, (p, f) => p.delay(ms, jitterMs, f));
  }

  /** Drops a share of the bytes (or chunks) on the link a-b. */
  drop(a: number, b: number, share: number, o: LinkFaultOptions & { unit?: "bytes" | "chunks"; reset?: boolean } = {}): void {
    this.#pair(a, b, o, (p, f) => p.drop(share, { ...f, unit: o.unit, reset: o.reset }));
  }

  /** Cuts node `a` from every other node (its clients still reach it). */
  isolate(a: number, o: { forMs?: number } = {}): void {
    for (let b = 0; b < this.size; b++) if (b !== a) this.cut(a, b, o);
  }

  /** Cuts every link between the groups, e.g. `[[0], [1, 2]]`. */
  split(groups: number[][], o: { forMs?: number } = {}): void {
    for (const [i, g] of groups.entries()) {
      for (const h of groups.slice(i + 1)) for (const a of g) for (const b of h) this.cut(a, b, o);
    }
  }

  /** The same fault on every link. */
  each(apply: (a: number, b: number) => void): void {
    for (let a = 0; a < this.size; a++) for (let b = a + 1; b < this.size; b++) apply(a, b);
  }

  /** Heals every link. */
  heal(): void {
    for (const row of this.proxies) for (const p of row) p?.heal();
  }

  async close(): Promise<void> {
    await Promise.all(this.proxies.flatMap((row) => row.map((p) => p?.close())));
    await new Promise<void>((resolve) => this.#sink.close(() => resolve()));
  }
}
