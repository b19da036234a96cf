import { describe, expect, it } from "vitest";
import { TimeLabel } from "./time-label.js";

describe("time label", () => {
  it("time label - formats once per second of time, not once per row", () => {
    const calls: number[] = [];
    const times = new TimeLabel({ format: (ms) => (calls.push(ms), `t${Math.floor(ms / 1000)}`) });
    const base = 1_764_633_600_000;
    // A burst: 1,000 rows over 2.5 s.
    const labels = Array.from({ length: 1_000 }, (_, i) => times.of(base + i * 2.5));
    expect(calls).toEqual([base, base + 1_000, base + 2_000]);
    expect(new Set(labels)).toEqual(new Set(["t1764633600", "t1764633601", "t1764633602"]));
  });

  it("time label - the default is the locale's medium time of that instant", () => {
    const ms = Date.UTC(2026, 11, 2, 0, 45, 7, 900);
    expect(new TimeLabel().of(ms)).toBe(new Date(ms).toLocaleTimeString(undefined, { timeStyle: "medium" }));
  });
});
