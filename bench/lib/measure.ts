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

/** One timed run: wall-clock rate and this process's CPU time per operation. */
export interface Sample {
  /** Operations per second, wall clock. */
  rate: number;
  /** Microseconds of CPU (user + system) this process spent per operation: load on the machine barely moves it. */
  cpuMicros: number;
}

/** Runs `fn` once and measures it. */
export async function sample(fn: Runner): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const ops = await fn();
  const ns = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  return { rate: ops / (ns / 1e9), cpuMicros: (used.user + used.system) / ops };
}

/** Runs `fn` once and returns its rate in operations per second. */
export async function rate(fn: Runner): Promise<number> {
  return (await sample(fn)).rate;
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
  /** Median client CPU per operation of each side, in microseconds. */
  cpuMicros: { subject: number; baseline: number };
  /** Every timed sample, in run order, for the curious. */
  samples: { subject: Sample[]; baseline: Sample[] };
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
  const samples = { subject: [] as Sample[], baseline: [] as Sample[] };
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      samples.subject.push(await sample(subject));
      samples.baseline.push(await sample(baseline));
    } else {
      samples.baseline.push(await sample(baseline));
      samples.subject.push(await sample(subject));
    }
  }
  const s = median(samples.subject.map((x) => x.rate));
  const b = median(samples.baseline.map((x) => x.rate));
  const cpuMicros = {
    subject: median(samples.subject.map((x) => x.cpuMicros)),
    baseline: median(samples.baseline.map((x) => x.cpuMicros)),
  };
  return { subject: s, baseline: b, ratio: s / b, cpuMicros, samples };
}
