/**
 * The retry rule of the delivery path (docs/reliability.md, "Retry rule"): a read that meets
 * `BROKER_UNAVAILABLE` is resumed, from where it got to, by the layer that made it, on the one
 * backoff, until it has gone `budgetMs` without progress. Then the error is passed on marked as
 * retried (`retriedMs`), and no layer above retries it again: budgets never stack.
 */
import { backoffDelay, BrokerUnavailableError, ErrorCode, InvalidArgumentError, isTidemarkError, type Backoff } from "@tidemark/shared";

/** @internal Settings of a {@link BrokerRetry}. */
export interface BrokerRetryOptions {
  /** Time without progress after which broker trouble is passed on. @default 60000 */
  budgetMs?: number;
  /** Backoff between attempts (full jitter). @default { baseMs: 200, maxMs: 5000 } */
  backoff?: Backoff;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
  /** Jitter source, for tests. @default Math.random */
  random?: () => number;
  /** How `wait()` sleeps, for tests. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/** @internal The one budget and backoff of every broker read on the delivery path. */
export const BROKER_RETRY = { budgetMs: 60_000, backoff: { baseMs: 200, maxMs: 5_000 } } as const;

const defaults: Required<BrokerRetryOptions> = {
  ...BROKER_RETRY,
  now: () => Date.now(),
  random: Math.random,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** True for broker trouble that no layer below has retried yet. */
function retryable(err: unknown): boolean {
  return isTidemarkError(err) && err.code === ErrorCode.BrokerUnavailable && !((err as BrokerUnavailableError).retriedMs > 0);
}

/**
 * @internal One read's retry budget: call `progress()` when the read moves on, and on a failure
 * `wait(err)` before reading again from the last position (it rejects with the error to pass on).
 *
 * @example
 * const retry = new BrokerRetry();
 * for (;;) {
 *   try { for await (const e of topic.follow({ after })) { after = e.cursor; retry.progress(); } }
 *   catch (err) { await retry.wait(err); }
 * }
 */
export class BrokerRetry {
  readonly #options: Required<BrokerRetryOptions>;
  /** When the first failure since the last progress happened; undefined after progress. */
  #since: number | undefined;
  #attempt = 0;

  constructor(options: BrokerRetryOptions = {}) {
    this.#options = { ...defaults, ...options };
    if (!(this.#options.budgetMs >= 0)) throw new InvalidArgumentError("broker retry: budgetMs must be >= 0");
    backoffDelay(0, this.#options.backoff, () => 0); // validates the backoff once
  }

  /** The read moved on: the next failure starts a fresh budget, from the backoff's first step. */
  progress(): void {
    this.#since = undefined;
    this.#attempt = 0;
  }

  /**
   * The wait before reading again after `err`, or undefined when `err` is to be passed on (not
   * broker trouble, retried already by a layer below, or the budget is spent). A wait never
   * reaches past the budget: the last attempt comes when it ends.
   */
  delayFor(err: unknown): number | undefined {
    if (!retryable(err)) return undefined;
    const now = this.#options.now();
    this.#since ??= now;
    const left = this.#since + this.#options.budgetMs - now;
    if (left <= 0) return undefined;
    return Math.min(left, backoffDelay(this.#attempt++, this.#options.backoff, this.#options.random));
  }

  /** The error to pass on after `delayFor(err)` said undefined: broker trouble this retry gave up on is marked as retried. */
  passOn(err: unknown): unknown {
    if (!retryable(err) || this.#since === undefined) return err;
    const e = err as BrokerUnavailableError;
    return new BrokerUnavailableError(e.message, { cause: e, maybeStored: e.maybeStored, retriedMs: Math.max(1, this.#options.now() - this.#since) });
  }

  /** Sleeps before the next attempt, or rejects with the error to pass on. */
  async wait(err: unknown): Promise<void> {
    const delay = this.delayFor(err);
    if (delay === undefined) throw this.passOn(err);
    await this.#options.sleep(delay);
  }
}
