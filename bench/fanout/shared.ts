/** What the fan-out benchmark's processes share: the latency histogram and the IPC messages. */

/** Wall clock in ms with sub-ms precision, comparable across processes on one machine. */
export const now = (): number => performance.timeOrigin + performance.now();

/** Fixed-memory latency histogram: 0.05 ms buckets up to 60 s. */
export class Histogram {
  static readonly STEP = 0.05;
  counts = new Uint32Array(Math.ceil(60_000 / Histogram.STEP) + 1);
  total = 0;

  add(ms: number): void {
    const i = Math.min(this.counts.length - 1, Math.max(0, Math.round(ms / Histogram.STEP)));
    this.counts[i]!++;
    this.total++;
  }

  merge(other: { counts: ArrayLike<number> }): void {
    for (let i = 0; i < this.counts.length; i++) {
      const c = other.counts[i] ?? 0;
      this.counts[i]! += c;
      this.total += c;
    }
  }

  quantile(q: number): number {
    if (this.total === 0) return Number.NaN;
    const rank = Math.ceil(q * this.total);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return i * Histogram.STEP;
    }
    return Number.NaN;
  }

  /** Sparse form for IPC. */
  toJSON(): [number, number][] {
    const out: [number, number][] = [];
    this.counts.forEach((c, i) => c > 0 && out.push([i, c]));
    return out;
  }

  static from(sparse: [number, number][]): Histogram {
    const h = new Histogram();
    for (const [i, c] of sparse) {
      h.counts[i] = c;
      h.total += c;
    }
    return h;
  }
}

export type Impl = "bridge" | "ws" | "socketio";

/** Event payload: publish time and a sequence number, padded to a typical notification size. */
export interface Payload {
  t: number;
  i: number;
  title: string;
}

export const TOPIC = "fanout";
export const NAMESPACE = "fanout";
/** Core NATS subject of tenant `t` for the baselines. */
export const subjectOf = (tenant: string) => `bench.fanout.${tenant}`;
export const tenantOf = (i: number, tenants: number) => `t${i % tenants}`;
