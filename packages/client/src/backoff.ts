/**
 * Reconnect delays: capped exponential backoff with full jitter (a random delay between zero and
 * the capped exponential step), so a restarted server is not hit by every browser at once.
 */
import { InvalidArgumentError } from "@tidemark/shared";

/** Backoff settings. */
export interface BackoffOptions {
  /** First step, in ms. @default 500 */
  baseMs?: number;
  /** Largest delay, in ms. @default 15000 */
  maxMs?: number;
}

/** @internal */
export const defaultBackoff: Required<BackoffOptions> = { baseMs: 500, maxMs: 15_000 };

/**
 * Delay before reconnect attempt `attempt` (0-based): uniform in `[0, min(maxMs, baseMs * 2^attempt))`.
 * Pure: pass `random` to make it deterministic.
 *
 * @example backoffDelay(3, { baseMs: 500, maxMs: 15_000 }) // somewhere in [0, 4000)
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const { baseMs, maxMs } = { ...defaultBackoff, ...options };
  if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new InvalidArgumentError("backoff: need 0 < baseMs <= maxMs");
  const step = Math.max(0, Math.floor(attempt));
  // 2^step overflows to Infinity past ~1024; the cap keeps the result finite.
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(step, 60));
  return Math.floor(random() * ceiling);
}
