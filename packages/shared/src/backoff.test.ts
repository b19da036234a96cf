import { describe, expect, it } from "vitest";
import { backoffCeiling, backoffDelay } from "./backoff.js";
import { InvalidArgumentError } from "./errors.js";

describe("backoff", () => {
  it("backoff - the ceiling doubles from baseMs and stops at maxMs", () => {
    const steps = [0, 1, 2, 3, 4, 5, 10, 100].map((a) => backoffCeiling(a, { baseMs: 100, maxMs: 1000 }));
    expect(steps).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
  });

  it("backoff - full jitter: a delay is uniform in [0, ceiling), never the ceiling itself", () => {
    const options = { baseMs: 100, maxMs: 10_000 };
    expect(backoffDelay(4, options, () => 0)).toBe(0);
    expect(backoffDelay(4, options, () => 0.5)).toBe(800);
    expect(backoffDelay(4, options, () => 0.999999)).toBe(1599);
    const samples = Array.from({ length: 500 }, () => backoffDelay(3, options));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThan(800);
    expect(new Set(samples).size).toBeGreaterThan(50);
  });

  it("backoff - past the cap the jitter still spans [0, maxMs)", () => {
    const capped = Array.from({ length: 500 }, () => backoffDelay(50, { baseMs: 100, maxMs: 1000 }));
    expect(Math.max(...capped)).toBeLessThan(1000);
    expect(Math.max(...capped)).toBeGreaterThan(500);
    expect(Math.min(...capped)).toBeLessThan(500);
  });

  it("backoff - huge or negative attempt numbers stay finite", () => {
    expect(backoffCeiling(1e9, { baseMs: 1, maxMs: 50 })).toBe(50);
    expect(backoffDelay(1e9, { baseMs: 1, maxMs: 50 }, () => 0.5)).toBe(25);
    expect(backoffDelay(-3, { baseMs: 10, maxMs: 50 }, () => 0.5)).toBe(5);
    expect(backoffDelay(Number.NaN, { baseMs: 10, maxMs: 50 }, () => 0.5)).toBe(5);
  });

  it("backoff - refuses nonsense settings with InvalidArgumentError", () => {
    expect(() => backoffDelay(0, { baseMs: 0, maxMs: 10 })).toThrow(InvalidArgumentError);
    expect(() => backoffDelay(0, { baseMs: 100, maxMs: 10 })).toThrow(InvalidArgumentError);
    expect(() => backoffCeiling(0, { baseMs: Number.NaN, maxMs: 10 })).toThrow(InvalidArgumentError);
  });
});
