/**
 * Timing for benchmarks that compare Tidemark with a raw baseline: warm each side up, then run
 * the sides alternately for a few rounds (so drift in the machine hits both alike) and keep the
 * median rate of each.
 */

/** One side of a comparison: runs once and returns how many operations it did. */
export type Runner = () => Promise<number>;

/** Median of a list of numbers (mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs `fn` once and returns its rate in operations per second. */
export async function rate(fn: Runner): Promise<number> {
  const start = process.hrtime.bigint();
  const ops = await fn();
  const ns = Number(process.hrtime.bigint() - start);
  return ops / (ns / 1e9);
}

export interface CompareOptions {
  /** Untimed runs of each side before measuring. @default 1 */
  warmup?: number;
  /** Timed runs of each side, alternating (which side goes first alternates too). @default 5 */
  rounds?: number;
}

/** Median rates of two sides measured alternately; `ratio` is `subject / baseline`. */
export interface Comparison {
  subject: number;
  baseline: number;
  ratio: number;
  /** Every timed rate, in run order, for the curious. */
  samples: { subject: number[]; baseline: number[] };
}

/**
 * Measures `subject` (Tidemark) against `baseline` (raw NATS).
 * @example const c = await compare(() => publishTidemark(5000), () => publishRaw(5000));
 */
export async function compare(subject: Runner, baseline: Runner, options: CompareOptions = {}): Promise<Comparison> {
  const { warmup = 1, rounds = 5 } = options;
  for (let i = 0; i < warmup; i++) {
    await baseline();
    await subject();
  }
  const samples = { subject: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      samples.subject.push(await rate(subject));
      samples.baseline.push(await rate(baseline));
    } else {
      samples.baseline.push(await rate(baseline));
      samples.subject.push(await rate(subject));
    }
  }
  const s = median(samples.subject);
  const b = median(samples.baseline);
  return { subject: s, baseline: b, ratio: s / b, samples };
}
