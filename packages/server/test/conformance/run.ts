/**
 * Runs a model property with the suite's settings: a bounded number of runs by default,
 * `TIDEMARK_MODEL_RUNS=N` for more, `TIDEMARK_MODEL_SEED` (and `TIDEMARK_MODEL_PATH`) to replay
 * a failure, `TIDEMARK_MODEL_HUB_MODE` (`topic` or `tenant`) to pick the hub mode. A failing run
 * throws with its seed, its path and the shrunk command list.
 */
import fc from "fast-check";

export interface ModelRunOptions {
  /** Runs when TIDEMARK_MODEL_RUNS is not set. */
  defaultRuns: number;
  /** Stop generating (and shrinking) after this long; the runs done so far count. */
  timeLimitMs: number;
}

export function modelSettings(options: ModelRunOptions): { numRuns: number; timeLimitMs: number; seed?: number; path?: string } {
  const env = process.env;
  const numRuns = env.TIDEMARK_MODEL_RUNS ? Number(env.TIDEMARK_MODEL_RUNS) : options.defaultRuns;
  const seed = env.TIDEMARK_MODEL_SEED ? Number(env.TIDEMARK_MODEL_SEED) : undefined;
  // More runs get proportionally more time (about 10 s a run, plus shrinking).
  const timeLimitMs = Math.max(options.timeLimitMs, numRuns * 10_000 + 120_000);
  return { numRuns, timeLimitMs, seed, path: seed === undefined ? undefined : env.TIDEMARK_MODEL_PATH };
}

/** Checks `property`; on failure throws an error that says how to replay it. */
export async function checkModel<T>(name: string, property: fc.IAsyncProperty<T>, options: ModelRunOptions): Promise<{ runs: number }> {
  const s = modelSettings(options);
  const out = await fc.check(property, {
    numRuns: s.numRuns,
    seed: s.seed,
    path: s.path,
    interruptAfterTimeLimit: s.timeLimitMs,
    // Commands print themselves; a shrunk list is the counterexample.
    verbose: fc.VerbosityLevel.None,
  });
  console.log(`FIGURES ${name} ${JSON.stringify({ runs: out.numRuns, seed: out.seed, interrupted: out.interrupted })}`);
  if (out.failed) {
    const error = out.errorInstance as Error | undefined;
    throw new Error(
      `${name}: the model and the system disagree (seed ${out.seed}, ${out.numShrinks} shrinks)\n` +
        `  replay: TIDEMARK_MODEL_SEED=${out.seed} TIDEMARK_MODEL_PATH=${out.counterexamplePath ?? ""}\n` +
        `  commands: ${fc.stringify(out.counterexample)}\n` +
        `  ${error?.message ?? String(out.errorInstance)}`,
    );
  }
  return { runs: out.numRuns };
}

/**
 * Adds the broker's own warnings and errors to a failure: nats-server answers some failures with
 * a fixed sentence ("error creating store for stream") and writes the cause only to its log.
 */
export function withBrokerLog(err: unknown, broker: { logs(): string } | undefined): unknown {
  const lines = broker?.logs().split("\n").filter((l) => /\[(ERR|WRN|FTL)\]/.test(l)).slice(-20) ?? [];
  if (!(err instanceof Error) || lines.length === 0) return err;
  err.message += `\n  nats-server log (warnings and errors):\n    ${lines.join("\n    ")}`;
  return err;
}
