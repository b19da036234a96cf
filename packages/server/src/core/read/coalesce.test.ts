import { describe, it, expect } from "vitest";
import { coalesceAfter } from "./coalesce.js";

describe("coalesceAfter", () => {
  it("coalesce - callers during a call share one later call that starts after theirs", async () => {
    let calls = 0;
    const release: (() => void)[] = [];
    const read = coalesceAfter(
      () =>
        new Promise<number>((resolve) => {
          const n = ++calls;
          release.push(() => resolve(n));
        }),
    );
    const a = read(); // starts call 1
    const b = read(); // must not reuse call 1 (it started before b)
    const c = read(); // shares b's call
    expect(calls).toBe(1);
    release.shift()!();
    expect(await a).toBe(1);
    await Promise.resolve();
    await Promise.resolve();
    expect(calls).toBe(2);
    release.shift()!();
    expect(await b).toBe(2);
    expect(await c).toBe(2);
    const d = read(); // nothing in flight: a fresh call
    expect(calls).toBe(3);
    release.shift()!();
    expect(await d).toBe(3);
  });

  it("coalesce - a failed call fails its callers and does not block the next", async () => {
    let calls = 0;
    const read = coalesceAfter(async () => {
      calls++;
      if (calls === 1) throw new Error("boom");
      return calls;
    });
    await expect(read()).rejects.toThrow("boom");
    expect(await read()).toBe(2);
  });
});
