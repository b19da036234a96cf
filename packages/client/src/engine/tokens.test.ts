import { describe, expect, it, vi } from "vitest";
import { TokenSource } from "./tokens.js";

describe("tokens", () => {
  it("tokens - one request however many ask at once, then the cached token", async () => {
    let calls = 0;
    const source = new TokenSource(() => [async () => `t${++calls}`], 0, () => undefined);
    const all = await Promise.all([source.get(), source.get(), source.get()]);
    expect(all).toEqual(["t1", "t1", "t1"]);
    expect(await source.get()).toBe("t1");
    expect(calls).toBe(1);
    expect(await source.get(true)).toBe("t2");
  });

  it("tokens - a tab that fails is skipped for the next one", async () => {
    const source = new TokenSource(() => [() => Promise.reject(new Error("closed tab")), () => "from b"], 0, () => undefined);
    expect(await source.get()).toBe("from b");
  });

  it("tokens - forget makes the next get ask again; no provider gives no token", async () => {
    let calls = 0;
    const source = new TokenSource(() => [() => `t${++calls}`], 0, () => undefined);
    await source.get();
    source.forget();
    expect(await source.get()).toBe("t2");
    expect(await new TokenSource(() => [], 0, () => undefined).get()).toBeUndefined();
  });

  it("tokens - refresh happens before expiry and hands the new token over", async () => {
    vi.useFakeTimers();
    try {
      const sent: string[] = [];
      let calls = 0;
      const source = new TokenSource(() => [() => `t${++calls}`], 0, (t) => sent.push(t));
      source.schedule(Date.now() + 10_000);
      await vi.advanceTimersByTimeAsync(7_900);
      expect(sent).toEqual([]);
      await vi.advanceTimersByTimeAsync(200);
      expect(sent).toEqual(["t1"]);
      source.schedule(undefined);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(sent).toEqual(["t1"]);
    } finally {
      vi.useRealTimers();
    }
  });
});
