import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff.js";
import { InvalidArgumentError } from "@tidemark/shared";

describe("backoff", () => {
  it("backoff - grows exponentially up to the cap", () => {
    const top = () => 0.999999;
    const ceilings = [0, 1, 2, 3, 4, 5, 10, 100].map((a) => backoffDelay(a, { baseMs: 100, maxMs: 1000 }, top));
    expect(ceilings).toEqual([99, 199, 399, 799, 999, 999, 999, 999]);
  });

  it("backoff - full jitter spans zero to the ceiling", () => {
    expect(backoffDelay(4, { baseMs: 100, maxMs: 10_000 }, () => 0)).toBe(0);
    expect(backoffDelay(4, { baseMs: 100, maxMs: 10_000 }, () => 0.5)).toBe(800);
    const samples = Array.from({ length: 500 }, () => backoffDelay(3, { baseMs: 100, maxMs: 10_000 }));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThan(800);
    expect(new Set(samples).size).toBeGreaterThan(50);
  });

  it("backoff - huge attempt numbers stay finite", () => {
    expect(backoffDelay(1e9, { baseMs: 1, maxMs: 50 }, () => 0.5)).toBe(25);
    expect(backoffDelay(-3, { baseMs: 10, maxMs: 50 }, () => 0.5)).toBe(5);
  });

  it("backoff - refuses nonsense settings", () => {
    expect(() => backoffDelay(0, { baseMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => backoffDelay(0, { baseMs: 100, maxMs: 10 })).toThrow(InvalidArgumentError);
  });
});
