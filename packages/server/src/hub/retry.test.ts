import { describe, expect, it } from "vitest";
import { BrokerUnavailableError, ErrorCode, InvalidArgumentError, RetentionGapError } from "@tidemark/shared";
import { BROKER_RETRY, BrokerRetry } from "./retry.js";

const trouble = () => new BrokerUnavailableError("request timed out");

/** A retry on a hand-moved clock whose jitter always picks the top of the step. */
function clocked(budgetMs = 10_000) {
  const clock = { now: 1_000 };
  const retry = new BrokerRetry({ budgetMs, backoff: { baseMs: 100, maxMs: 1_000 }, now: () => clock.now, random: () => 0.999999 });
  return { clock, retry };
}

describe("broker retry", () => {
  it("broker retry - one budget, stated once: a minute without progress, backoff 200 ms doubling to 5 s", () => {
    expect(BROKER_RETRY).toEqual({ budgetMs: 60_000, backoff: { baseMs: 200, maxMs: 5_000 } });
  });

  it("broker retry - broker trouble is retried on the backoff while the budget lasts", () => {
    const { clock, retry } = clocked();
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      const delay = retry.delayFor(trouble());
      delays.push(delay);
      clock.now += delay ?? 0;
    }
    expect(delays).toEqual([99, 199, 399, 799, 999]);
  });

  it("broker retry - past the budget the error is passed on, marked as retried, with its message", () => {
    const { clock, retry } = clocked(1_500);
    let waited = 0;
    for (let delay = retry.delayFor(trouble()); delay !== undefined; delay = retry.delayFor(trouble())) {
      waited += delay;
      clock.now += delay;
    }
    // The last wait is cut to what is left of the budget: never past it.
    expect(waited).toBe(1_500);
    const original = trouble();
    const passed = retry.passOn(original);
    expect(passed).toBeInstanceOf(BrokerUnavailableError);
    expect(passed).toMatchObject({ code: ErrorCode.BrokerUnavailable, message: original.message, retriedMs: 1_500, cause: original });
  });

  it("broker retry - progress starts a fresh budget and the backoff again from its first step", () => {
    const { clock, retry } = clocked(1_000);
    clock.now += retry.delayFor(trouble())!;
    clock.now += retry.delayFor(trouble())!;
    clock.now += 900;
    expect(retry.delayFor(trouble())).toBeUndefined();
    retry.progress();
    clock.now += 60_000;
    expect(retry.delayFor(trouble())).toBe(99);
    expect(retry.delayFor(trouble())).toBe(199);
  });

  it("broker retry - other errors, and broker trouble a layer below already retried, are passed on as they are", () => {
    const { retry } = clocked();
    const gap = new RetentionGapError("gone", { requestedSequence: 1, firstAvailableSequence: 5 });
    expect(retry.delayFor(gap)).toBeUndefined();
    expect(retry.passOn(gap)).toBe(gap);
    expect(retry.delayFor(new Error("boom"))).toBeUndefined();
    const spent = new BrokerUnavailableError("request timed out", { retriedMs: 60_000 });
    expect(retry.delayFor(spent)).toBeUndefined();
    expect(retry.passOn(spent)).toBe(spent);
    // Still a fresh budget for the next trouble of its own.
    expect(retry.delayFor(trouble())).toBe(99);
  });

  it("broker retry - wait() sleeps the delay, or rejects with the error to pass on", async () => {
    const slept: number[] = [];
    const retry = new BrokerRetry({ budgetMs: 0, sleep: async (ms) => void slept.push(ms) });
    const original = trouble();
    await expect(retry.wait(original)).rejects.toMatchObject({ code: ErrorCode.BrokerUnavailable, cause: original });
    const patient = new BrokerRetry({ random: () => 0.5, sleep: async (ms) => void slept.push(ms) });
    await patient.wait(trouble());
    expect(slept).toEqual([100]);
  });

  it("broker retry - refuses nonsense settings", () => {
    expect(() => new BrokerRetry({ budgetMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => new BrokerRetry({ backoff: { baseMs: 0, maxMs: 1 } })).toThrow(InvalidArgumentError);
  });
});
