import { describe, expect, it } from "vitest";
import { STALL_TOLERANCE_MS, StallClock } from "./stall.js";

describe("stall clock", () => {
  it("stall clock - a tick later than its interval by more than the tolerance stops the clock for that long; jitter does not", () => {
    let wall = 1_000;
    const clock = new StallClock(() => wall);
    wall += 10 + STALL_TOLERANCE_MS; // on the edge: jitter
    expect(clock.tick(10)).toBe(wall);
    wall += 10 + 1_500; // the loop did not turn for 1.5 s
    expect(clock.tick(10)).toBe(wall - 1_500);
    expect(clock.now()).toBe(wall - 1_500);
    expect(clock.wallOf(clock.now())).toBe(wall);
    expect({ stalls: clock.stalls, longestMs: clock.longestMs, stalledMs: clock.stalledMs }).toEqual({ stalls: 1, longestMs: 1_500, stalledMs: 1_500 });
  });

  it("stall clock - a deadline set before a stall is reached only after the loop has turned for its whole length", () => {
    let wall = 0;
    const clock = new StallClock(() => wall);
    const deadline = clock.now() + 2_500;
    wall += 1_000;
    clock.tick(1_000);
    wall += 5_000; // stalled: a tick 4 s late
    expect(clock.tick(1_000)).toBeLessThan(deadline);
    wall += 1_000;
    expect(clock.tick(1_000)).toBeGreaterThanOrEqual(deadline);
  });
});
