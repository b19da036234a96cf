import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BrokerUnavailableError, decodeCursor, encodeCursor, type Cursor } from "@tidemark/shared";
import { HeadReader, type HeadSource } from "./head.js";

// A topic whose head() calls stay open until the test answers them, in order; a head cursor
// here is just "h<sequence>". These tests are about timing, so the clock is vitest's.
function fakeTopic() {
  const calls: { at: number; answer: (sequence: number) => void; fail: (err: unknown) => void }[] = [];
  const topic: HeadSource = {
    head: () =>
      new Promise<Cursor>((resolve, reject) => {
        calls.push({ at: Date.now(), answer: (s) => resolve(`h${s}` as Cursor), fail: reject });
      }),
    cursorSequence: (cursor: string) => Number(cursor.slice(1)),
    cursorAt: (sequence: number) => `h${sequence}` as Cursor,
  };
  return { topic, calls };
}

/** Lets promise callbacks run (no timer moves). */
const flush = () => vi.advanceTimersByTimeAsync(0);

describe("head reads", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("head - callers that arrive while a read is in flight share ONE next read", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 25 });
    const first = reader.read();
    await flush();
    expect(calls).toHaveLength(1);
    const later = Array.from({ length: 50 }, () => reader.read());
    calls[0]!.answer(10);
    expect((await first).sequence).toBe(10);
    await vi.advanceTimersByTimeAsync(25);
    expect(calls).toHaveLength(2);
    calls[1]!.answer(12);
    const reads = await Promise.all(later);
    expect(new Set(reads.map((r) => r.serial))).toEqual(new Set([2]));
    expect(reads.every((r) => r.sequence === 12)).toBe(true);
    expect(reader.reads).toBe(2);
  });

  it("head - a spacing timer that fires early (a long event-loop tick) does not start the read before the spacing", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 25 });
    const first = reader.read();
    await flush();
    calls[0]!.answer(1);
    await first;
    // Node counts a timer from the loop's cached time: after a 7 ms tick it fires 7 ms early.
    const setTimer = globalThis.setTimeout;
    const early = vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) => setTimer(fn, Math.max(0, (ms ?? 0) - 7))) as typeof setTimeout);
    const second = reader.read();
    early.mockRestore(); // only the timer armed by that call fires early
    await vi.advanceTimersByTimeAsync(20);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(25);
    calls[1]!.answer(2);
    expect((await second).sequence).toBe(2);
  });

  it("head - never shares a read that started before the call, even a finished-soon one", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 0 });
    const early = reader.read();
    await flush();
    // An event is published and seen by the caller here; read 1 may have missed it.
    const late = reader.read();
    calls[0]!.answer(5);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.answer(6);
    expect((await early).serial).toBe(1);
    const read = await late;
    expect(read.serial).toBe(2);
    expect(read.sequence).toBe(6);
  });

  it("head - reads start at least spacingMs apart and one at a time", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 25 });
    void reader.read();
    await flush();
    calls[0]!.answer(1); // answered at once: the next read still waits out the spacing
    await flush();
    void reader.read();
    await vi.advanceTimersByTimeAsync(24);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    // A slow read: the next starts only once it has answered, not on the spacing's timer.
    void reader.read();
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(2);
    calls[1]!.answer(2);
    await flush();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(25);
  });

  it("head - a failed read rejects every caller that shared it; the next call reads again", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 25 });
    void reader.read();
    await flush();
    const waiters = Array.from({ length: 5 }, () => reader.read());
    const settled = Promise.allSettled(waiters);
    calls[0]!.answer(1);
    await vi.advanceTimersByTimeAsync(25);
    expect(calls).toHaveLength(2);
    const boom = new Error("not a broker outage: not retried");
    calls[1]!.fail(boom);
    const results = await settled;
    expect(results.map((r) => (r.status === "rejected" ? r.reason : r.value))).toEqual(Array(5).fill(boom));
    const again = reader.read();
    await vi.advanceTimersByTimeAsync(25);
    expect(calls).toHaveLength(3);
    calls[2]!.answer(3);
    expect((await again).sequence).toBe(3);
  });

  it("head - a broker timeout is retried inside the shared read before its callers see it", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 25 });
    const read = reader.read();
    await flush();
    calls[0]!.fail(new BrokerUnavailableError("timeout"));
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toHaveLength(2);
    calls[1]!.answer(4);
    expect((await read).sequence).toBe(4);
    expect(reader.reads).toBe(1);
  });

  it("head - an urgent read (a live-only subscriber) does not wait out the spacing", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 1_000 });
    void reader.read();
    await flush();
    calls[0]!.answer(1);
    await flush();
    const patient = reader.read();
    await flush();
    expect(calls).toHaveLength(1);
    const urgent = reader.read(true);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.answer(2);
    // The patient caller shares the urgent read: it too started after its call.
    expect((await patient).serial).toBe(2);
    expect((await urgent).serial).toBe(2);
  });

  it("head - an urgent caller arriving while a read is in flight gets the next read as soon as it ends", async () => {
    const { topic, calls } = fakeTopic();
    const reader = new HeadReader(topic, { spacingMs: 1_000 });
    const first = reader.read();
    await flush();
    const urgent = reader.read(true);
    await flush();
    expect(calls).toHaveLength(1);
    calls[0]!.answer(1);
    expect((await first).serial).toBe(1);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.answer(2);
    expect((await urgent).sequence).toBe(2);
  });

  it("head - reads of one incarnation give the same cursors to every follower; a re-created topic's head gets its own", async () => {
    const parts = { namespace: "n", topic: "t", incarnation: "i1" };
    let head = encodeCursor({ ...parts, sequence: 5 });
    const topic: HeadSource = { head: async () => head, cursorSequence: (c) => decodeCursor(c).sequence, cursorAt: () => encodeCursor({ ...parts, sequence: 0 }) };
    const reader = new HeadReader(topic, { spacingMs: 0 });
    const first = reader.read();
    await vi.advanceTimersByTimeAsync(0);
    head = encodeCursor({ ...parts, sequence: 9 });
    const second = reader.read();
    await vi.advanceTimersByTimeAsync(0);
    const [a, b] = [await first, await second];
    expect([a.sequence, b.sequence]).toEqual([5, 9]);
    expect(b.cursors).toBe(a.cursors);
    expect(a.cursors.at(7)).toBe(encodeCursor({ ...parts, sequence: 7 }));
    head = encodeCursor({ ...parts, incarnation: "i2", sequence: 1 });
    const third = reader.read();
    await vi.advanceTimersByTimeAsync(0);
    const c = await third;
    expect(c.cursors).not.toBe(a.cursors);
    expect(c.cursors.incarnation).toBe("i2");
    expect(c.cursors.at(3)).toBe(encodeCursor({ ...parts, incarnation: "i2", sequence: 3 }));
  });
});
