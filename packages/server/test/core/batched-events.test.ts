/**
 * A read hands out its batches one event per step with an async generator's contract: order,
 * the events before an error, `break` and abort releasing the source (its consumer).
 */
import { describe, expect, it } from "vitest";
import { BatchedEvents } from "../../src/internal.js";

/** A batch source like a consumer pass: records whether its `finally` (the release) ran. */
function source(batches: number[][], fail?: Error) {
  const state = { released: 0, pulled: 0 };
  async function* gen(): AsyncGenerator<number[], undefined> {
    try {
      for (const b of batches) {
        await new Promise((r) => setTimeout(r, 1));
        state.pulled++;
        yield b;
      }
      if (fail) throw fail;
      return undefined;
    } finally {
      state.released++;
    }
  }
  return { gen: gen(), state };
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

describe("BatchedEvents", () => {
  it("read - every event of every batch in order, empty batches skipped; done stays done", async () => {
    const { gen, state } = source([[1, 2, 3], [], [4], [5, 6]]);
    const it = new BatchedEvents(gen);
    expect(await drain(it)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await it.next()).toEqual({ value: undefined, done: true });
    expect(state.released).toBe(1);
  });

  it("read - the source is asked for the next batch only when the current one is used up", async () => {
    const { gen, state } = source([[1, 2], [3]]);
    const it = new BatchedEvents(gen);
    expect((await it.next()).value).toBe(1);
    expect((await it.next()).value).toBe(2);
    expect(state.pulled).toBe(1);
    expect((await it.next()).value).toBe(3);
    expect(state.pulled).toBe(2);
  });

  it("read - the events before an error are handed out, then the error, then done", async () => {
    const boom = new Error("gap");
    const { gen, state } = source([[1, 2], [3]], boom);
    const it = new BatchedEvents(gen);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const v of it) seen.push(v);
      })(),
    ).rejects.toBe(boom);
    expect(seen).toEqual([1, 2, 3]);
    expect(await it.next()).toEqual({ value: undefined, done: true });
    expect(state.released).toBe(1);
  });

  it("read - a break in the middle of a batch ends the source (its consumer is released)", async () => {
    const { gen, state } = source([[1, 2, 3], [4]]);
    const it = new BatchedEvents(gen);
    for await (const v of it) if (v === 2) break;
    expect(state.released).toBe(1);
    expect(state.pulled).toBe(1);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it("read - an abort between two events of one batch ends the iteration at the next step and releases the source", async () => {
    const ac = new AbortController();
    const { gen, state } = source([[1, 2, 3], [4]]);
    const seen: number[] = [];
    for await (const v of new BatchedEvents(gen, ac.signal)) {
      seen.push(v);
      if (v === 1) ac.abort();
    }
    expect(seen).toEqual([1]);
    expect(state.released).toBe(1);
  });

  it("read - an already aborted signal yields nothing and never starts the source", async () => {
    const ac = new AbortController();
    ac.abort();
    const { gen, state } = source([[1]]);
    expect(await drain(new BatchedEvents(gen, ac.signal))).toEqual([]);
    expect(state.pulled).toBe(0);
  });

  it("read - calls made while one waits for the source are answered in order, each event once", async () => {
    const { gen } = source([[1, 2], [3, 4], [5]]);
    const it = new BatchedEvents(gen);
    const results = await Promise.all(Array.from({ length: 7 }, () => it.next()));
    expect(results.map((r) => (r.done ? "done" : r.value))).toEqual([1, 2, 3, 4, 5, "done", "done"]);
  });
});
