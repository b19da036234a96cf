/**
 * Reconnect delays: the shared backoff of `@tidemark/shared` (capped exponential with full
 * jitter: a random delay between zero and the capped step), so a restarted server is not hit by
 * every browser at once. This file holds only the client's defaults.
 */
import { backoffDelay as sharedBackoffDelay } from "@tidemark/shared";

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
  return sharedBackoffDelay(attempt, { ...defaultBackoff, ...options }, random);
}
