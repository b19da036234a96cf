/**
 * What `worker.stop()` needs besides the worker itself: the deadline of a stop and the error it
 * rejects with, naming every handler still running.
 */
import { InvalidArgumentError, WorkerStopTimeoutError, type RunningHandler } from "@tidemark/shared";

/** A handler in flight: the delivery it runs and since when (`performance.now()`). */
export interface HandlerRun {
  eventId?: string;
  streamSequence: number;
  attempt: number;
  since: number;
}

/** Options of `worker.stop()`. */
export interface WorkerStopOptions {
  /**
   * Reject with WorkerStopTimeoutError when handlers still run after this long. Without it
   * (and without the worker's `stopGraceMs`), `stop()` waits as long as handlers run.
   */
  timeoutMs?: number;
}

/** Longest deadline accepted (one hour, the longest lease). */
const MAX_TIMEOUT_MS = 3600_000;

/** Validates a stop deadline; `undefined` means none. */
export function stopTimeout(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_TIMEOUT_MS) {
    throw new InvalidArgumentError(`timeoutMs must be an integer from 0 to ${MAX_TIMEOUT_MS}, got ${String(value)}`);
  }
  return value;
}

/**
 * Resolves with `work`, or after `timeoutMs` calls `expire()` and rejects with what it returns.
 * The timer is cleared as soon as `work` settles.
 */
export async function withDeadline(work: Promise<void>, timeoutMs: number, expire: () => Error): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), timeoutMs);
  });
  try {
    if ((await Promise.race([work.then(() => "done" as const), expired])) === "done") return;
  } finally {
    clearTimeout(timer);
  }
  throw expire();
}

/** The error of a stop whose deadline passed with `runs` still in flight. */
export function stopTimeoutError(consumer: string, timeoutMs: number, runs: Iterable<HandlerRun>): WorkerStopTimeoutError {
  const now = performance.now();
  const handlers: RunningHandler[] = [...runs].map((r) => ({
    consumer,
    ...(r.eventId !== undefined ? { eventId: r.eventId } : {}),
    streamSequence: r.streamSequence,
    attempt: r.attempt,
    runningMs: Math.round(now - r.since),
  }));
  const list = handlers
    .map((h) => `event ${h.eventId ?? "?"} (sequence ${h.streamSequence}, attempt ${h.attempt}, running ${h.runningMs} ms)`)
    .join(", ");
  return new WorkerStopTimeoutError(
    `worker of consumer ${JSON.stringify(consumer)} did not stop within ${timeoutMs} ms: ` +
      `${handlers.length} handler(s) still running: ${list || "none"}. Their leases are no longer renewed: ` +
      "the broker redelivers those events after leaseMs unless the handler acknowledges first",
    { timeoutMs, handlers },
  );
}
