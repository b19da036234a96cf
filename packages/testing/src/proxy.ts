/**
 * A TCP fault proxy for the fault suites (node:net, 127.0.0.1 only): one listener forwarding
 * every accepted connection to one target, with faults applied per direction — "up" is what
 * the connecting side sends to the target, "down" the target's answers.
 *
 * - `cut()` blackholes like a partitioned network: bytes are held, not delivered, and a new
 *   connection is accepted but not joined to the target until the cut heals (the kernel would
 *   retransmit the SYN). At heal everything held is delivered in order, as TCP's retransmission
 *   would. `cut({ reset: true })` instead destroys the connections and refuses new ones.
 * - `delay()` delivers each chunk `ms` + up to `jitterMs` later, never out of order.
 * - `drop()` discards a share of the bytes or of the chunks. The stream is damaged on purpose,
 *   which real TCP never delivers (checksums, retransmission) and plain NATS does not detect
 *   inside a message; `drop(share, { reset: true })` ends the connection at a drop instead: a
 *   link so lossy that TCP gives up.
 *
 * Every fault is bounded: it heals by itself after `forMs` (default `maxFaultMs`, 2 minutes),
 * and held bytes beyond `maxHeldBytes` end that connection. Dispose closes everything.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export type Direction = "up" | "down" | "both";

export interface ProxyOptions {
  /** Port on 127.0.0.1 to forward to. */
  targetPort: number;
  /** Port to listen on. @default a free port */
  port?: number;
  /** Longest any fault lasts before healing by itself. @default 120_000 */
  maxFaultMs?: number;
  /** Bytes held per connection and direction while cut before the connection is ended. @default 64 MiB */
  maxHeldBytes?: number;
}

export interface FaultOptions {
  direction?: Direction;
  /** Heals this fault by itself after this long. @default maxFaultMs */
  forMs?: number;
}

interface DirFaults {
  cut: boolean;
  delayMs: number;
  jitterMs: number;
  dropShare: number;
  dropUnit: "bytes" | "chunks";
  /** A drop ends the connection instead of passing on a damaged stream. */
  dropReset: boolean;
}

const clean = (): DirFaults => ({ cut: false, delayMs: 0, jitterMs: 0, dropShare: 0, dropUnit: "bytes", dropReset: false });

/** One way of one proxied connection: applies the faults of its direction, keeps order. */
class Pipe {
  held: Buffer[] = [];
  heldBytes = 0;
  readonly #queue: { at: number; chunk: Buffer }[] = [];
  constructor(
    readonly from: Socket,
    readonly to: Socket,
    readonly faults: () => DirFaults,
    /** Ends the connection (too much held, or a drop with `reset`). */
    readonly onOverflow: () => void,
    readonly maxHeldBytes: number,
  ) {
    from.on("data", (chunk: Buffer) => this.push(chunk));
  }

  push(chunk: Buffer): void {
    const f = this.faults();
    if (f.cut) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes > this.maxHeldBytes) this.onOverflow();
      return;
    }
    const kept = f.dropShare > 0 ? dropFrom(chunk, f) : chunk;
    if (f.dropReset && kept !== chunk) {
      this.onOverflow(); // ends the connection
      return;
    }
    if (!kept) return;
    if (f.delayMs === 0 && f.jitterMs === 0 && this.#queue.length === 0) {
      this.to.write(kept);
      return;
    }
    // One queue drained by one timer: timers of different lengths may fire out of order, and a
    // link reorders nothing inside one TCP stream.
    const at = Math.max(this.#queue.at(-1)?.at ?? 0, Date.now() + f.delayMs + Math.random() * f.jitterMs);
    this.#queue.push({ at, chunk: kept });
    if (this.#queue.length === 1) this.#drainLater();
  }

  #drainLater(): void {
    const head = this.#queue[0];
    if (!head) return;
    setTimeout(() => {
      while (this.#queue.length > 0 && this.#queue[0]!.at <= Date.now()) {
        const { chunk } = this.#queue.shift()!;
        if (!this.to.destroyed) this.to.write(chunk);
      }
      this.#drainLater();
    }, Math.max(0, head.at - Date.now()));
  }

  /** Delivers what was held during a cut. */
  release(): void {
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const chunk of held) this.push(chunk);
  }
}

function dropFrom(chunk: Buffer, f: DirFaults): Buffer | undefined {
  if (f.dropUnit === "chunks") return Math.random() < f.dropShare ? undefined : chunk;
  const out = Buffer.allocUnsafe(chunk.length);
  let n = 0;
  for (const byte of chunk) if (Math.random() >= f.dropShare) out[n++] = byte;
  return n === 0 ? undefined : out.subarray(0, n);
}

interface Conn {
  client: Socket;
  target?: Socket;
  up?: Pipe;
  down?: Pipe;
}

export class FaultProxy {
  readonly targetPort: number;
  /** Connections accepted in all. */
  accepted = 0;
  readonly #server: Server;
  readonly #conns = new Set<Conn>();
  readonly #faults = { up: clean(), down: clean() };
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #maxFaultMs: number;
  readonly #maxHeldBytes: number;
  #refusing = false;
  #port = 0;

  private constructor(server: Server, o: ProxyOptions) {
    this.#server = server;
    this.targetPort = o.targetPort;
    this.#maxFaultMs = o.maxFaultMs ?? 120_000;
    this.#maxHeldBytes = o.maxHeldBytes ?? 64 * 1024 ** 2;
    server.on("connection", (socket) => this.#accept(socket));
  }

  static async start(o: ProxyOptions): Promise<FaultProxy> {
    const server = createServer({ noDelay: true });
    const proxy = new FaultProxy(server, o);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(o.port ?? 0, "127.0.0.1", () => resolve());
    });
    proxy.#port = (server.address() as { port: number }).port;
    return proxy;
  }

  /** The listening port (kept after close). */
  get port(): number {
    return this.#port;
  }

  /** `nats://127.0.0.1:port` */
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Connections open now. */
  get open(): number {
    return this.#conns.size;
  }

  /** Is either direction cut now? */
  get isCut(): boolean {
    return this.#faults.up.cut || this.#faults.down.cut || this.#refusing;
  }

  /** Stops bytes (blackhole; `reset`: destroy the connections and refuse new ones) until healed. */
  cut(o: FaultOptions & { reset?: boolean } = {}): void {
    if (o.reset) {
      this.#refusing = true;
      for (const c of this.#conns) this.#end(c);
      this.#bounded(o, () => (this.#refusing = false));
      return;
    }
    this.#set(o, { cut: true });
  }

  /** Delivers each chunk `ms` plus up to `jitterMs` later. */
  delay(ms: number, jitterMs = 0, o: FaultOptions = {}): void {
    this.#set(o, { delayMs: ms, jitterMs });
  }

  /** Discards `share` (0..1) of the bytes, or of whole chunks; `reset`: a drop ends the connection. */
  drop(share: number, o: FaultOptions & { unit?: "bytes" | "chunks"; reset?: boolean } = {}): void {
    if (!(share >= 0 && share <= 1)) throw new RangeError(`drop share must be within 0..1, got ${share}`);
    this.#set(o, { dropShare: share, dropUnit: o.unit ?? "bytes", dropReset: o.reset ?? false });
  }

  /** Ends every fault: held bytes are delivered, waiting connections joined. */
  heal(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#refusing = false;
    this.#faults.up = clean();
    this.#faults.down = clean();
    for (const c of this.#conns) this.#resume(c);
  }

  /** Ends every open connection (a reset of the link); the faults stay. */
  resetConnections(): void {
    for (const c of this.#conns) this.#end(c);
  }

  async close(): Promise<void> {
    this.heal();
    for (const c of this.#conns) this.#end(c);
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #dirs(direction: Direction = "both"): DirFaults[] {
    return direction === "both" ? [this.#faults.up, this.#faults.down] : [this.#faults[direction]];
  }

  #set(o: FaultOptions, patch: Partial<DirFaults>): void {
    const dirs = this.#dirs(o.direction);
    for (const d of dirs) Object.assign(d, patch);
    this.#bounded(o, () => {
      const reset = clean();
      const undo = Object.fromEntries(Object.keys(patch).map((k) => [k, reset[k as keyof DirFaults]]));
      for (const d of dirs) Object.assign(d, undo);
      for (const c of this.#conns) this.#resume(c);
    });
  }

  #bounded(o: FaultOptions, undo: () => void): void {
    const ms = Math.min(o.forMs ?? this.#maxFaultMs, this.#maxFaultMs);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      undo();
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  #accept(client: Socket): void {
    this.accepted++;
    if (this.#refusing) {
      client.resetAndDestroy();
      return;
    }
    const conn: Conn = { client };
    this.#conns.add(conn);
    client.setNoDelay(true);
    client.on("error", () => this.#end(conn));
    client.on("close", () => this.#end(conn));
    client.pause(); // what it sends waits in the socket until it is joined to the target
    this.#resume(conn);
  }

  /** Joins a waiting connection to its target once nothing is cut, or releases held bytes. */
  #resume(conn: Conn): void {
    if (!this.#conns.has(conn)) return;
    if (conn.target) {
      conn.up?.release();
      conn.down?.release();
      return;
    }
    if (this.isCut) return; // a connection made during a cut waits, like a retransmitted SYN
    const target = connect({ port: this.targetPort, host: "127.0.0.1", noDelay: true });
    conn.target = target;
    target.on("error", () => this.#end(conn));
    target.on("close", () => this.#end(conn));
    const onOverflow = () => this.#end(conn);
    conn.up = new Pipe(conn.client, target, () => this.#faults.up, onOverflow, this.#maxHeldBytes);
    conn.down = new Pipe(target, conn.client, () => this.#faults.down, onOverflow, this.#maxHeldBytes);
    conn.client.resume();
  }

  #end(conn: Conn): void {
    if (!this.#conns.delete(conn)) return;
    conn.client.destroy();
    conn.target?.destroy();
  }
}
