/**
 * The one backoff of Tidemark: capped exponential with full jitter (a random delay between zero
 * and the capped step), so that many waiters that failed together do not come back together.
 * The client's reconnect and the server's retries after broker trouble both use it; only their
 * settings differ (docs/reliability.md, "Retry rule"). Pure and runtime-neutral.
 */
import { InvalidArgumentError } from "./errors.js";

/** Settings of a backoff. */
export interface Backoff {
  /** First step, in ms (> 0). */
  baseMs: number;
  /** Largest step, in ms (>= baseMs). */
  maxMs: number;
}

/**
 * Step `attempt` (0-based) without jitter: `min(maxMs, baseMs * 2^attempt)`. For the few waits
 * that must not be random (a bounded lookup, a deadline) and as the jitter's upper bound.
 *
 * @example backoffCeiling(3, { baseMs: 500, maxMs: 15_000 }) // 4000
 */
export function backoffCeiling(attempt: number, backoff: Backoff): number {
  const { baseMs, maxMs } = backoff;
  if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new InvalidArgumentError("backoff: need 0 < baseMs <= maxMs");
  const step = attempt > 0 ? Math.floor(attempt) : 0;
  // 2^step overflows to Infinity past ~1024; the cap keeps the result finite.
  return Math.min(maxMs, baseMs * 2 ** Math.min(step, 60));
}

/**
 * Delay before attempt `attempt` (0-based), uniform in `[0, backoffCeiling(attempt))`.
 * Pass `random` to make it deterministic.
 *
 * @example backoffDelay(3, { baseMs: 500, maxMs: 15_000 }) // somewhere in [0, 4000)
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  return Math.floor(random() * backoffCeiling(attempt, backoff));
}
