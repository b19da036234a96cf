import { describe, it, expect } from "vitest";
import { COMEBACK_MAX_MS, COMEBACK_MIN_MS, HelloRate } from "./hello-rate.js";

const zero = () => 0;

describe("hello rate", () => {
  it("hello rate - before any hello, a guess of 250 ms per place; the average follows the hellos answered", () => {
    const rate = new HelloRate(20);
    expect(rate.perSecond).toBe(80);
    for (let i = 0; i < 100; i++) rate.completed(100);
    expect(rate.helloMs).toBeCloseTo(100, 0);
    expect(rate.perSecond).toBeCloseTo(200, 0);
    // One slow hello moves it a tenth of the way, not all of it.
    rate.completed(1_100);
    expect(rate.helloMs).toBeCloseTo(200, 0);
    // A hello answered within the millisecond counts as one.
    const fast = new HelloRate(10, 1, 1);
    fast.completed(0);
    expect(fast.helloMs).toBe(1);
  });

  it("hello rate - refused sockets come back after the queue ahead, one slot apart: at the rate hellos complete", () => {
    const rate = new HelloRate(20, 100, 1); // 200 hellos/s: a slot is 5 ms
    const now = 1_000_000;
    // 20 waiting ahead: done after 100 ms; the first comes back then (plus the floor).
    const hints = Array.from({ length: 280 }, () => rate.comebackMs(20, now, zero));
    expect(hints[0]).toBe(COMEBACK_MIN_MS + 100);
    expect(hints[1]).toBe(COMEBACK_MIN_MS + 105);
    expect(hints.at(-1)).toBe(COMEBACK_MIN_MS + 100 + 279 * 5);
    // Evenly: 280 comebacks over 1.4 s, 200 a second.
    expect(new Set(hints).size).toBe(280);
  });

  it("hello rate - a comeback lies at a random point of its slot", () => {
    const rate = new HelloRate(20, 100, 1);
    expect(rate.comebackMs(0, 0, () => 0.999)).toBe(COMEBACK_MIN_MS + 5);
    expect(rate.comebackMs(0, 0, () => 0.5)).toBeCloseTo(COMEBACK_MIN_MS + 5 + 2.5, -1);
  });

  it("hello rate - the schedule drains as time passes", () => {
    const rate = new HelloRate(10, 1_000, 1); // 10 hellos/s: a slot is 100 ms
    for (let i = 0; i < 50; i++) rate.comebackMs(0, 0, zero); // handed out up to 5 s after the floor
    expect(rate.comebackMs(0, 0, zero)).toBe(COMEBACK_MIN_MS + 5_000);
    expect(rate.comebackMs(0, 5_000, zero)).toBe(COMEBACK_MIN_MS + 100); // 5 s later: the slot after the last one
    expect(rate.comebackMs(0, 60_000, zero)).toBe(COMEBACK_MIN_MS); // long after: the floor again
  });

  it("hello rate - slower hellos name later comebacks", () => {
    const fast = new HelloRate(100, 50, 1);
    const slow = new HelloRate(100, 2_000, 1);
    expect(slow.comebackMs(100, 0, zero)).toBeGreaterThan(fast.comebackMs(100, 0, zero));
    expect(slow.comebackMs(100, 0, zero)).toBe(COMEBACK_MIN_MS + 2_000 + 20);
  });

  it("hello rate - past 30 s of schedule, comebacks spread over the whole window and promise no slot", () => {
    const rate = new HelloRate(10, 1_000, 1); // a slot is 100 ms: 298 slots fill the window
    const hints = Array.from({ length: 1_000 }, (_, i) => rate.comebackMs(0, 0, () => (i % 100) / 100));
    for (const h of hints) {
      expect(h).toBeGreaterThanOrEqual(COMEBACK_MIN_MS);
      expect(h).toBeLessThanOrEqual(COMEBACK_MAX_MS);
    }
    const overflow = hints.slice(300);
    expect(Math.min(...overflow)).toBe(COMEBACK_MIN_MS);
    expect(Math.max(...overflow)).toBeGreaterThan(COMEBACK_MAX_MS * 0.95);
    // The schedule stopped at the window's end (298 slots after the floor): 20 s later, the next slot is 10.05 s away.
    expect(rate.comebackMs(0, 20_000, zero)).toBe(COMEBACK_MIN_MS + 29_800 - 20_000);
  });
});
