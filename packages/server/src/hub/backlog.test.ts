import { describe, it, expect } from "vitest";
import type { TidemarkEvent } from "@tidemark/shared";
import { Backlog } from "./backlog.js";

const ev = (seq: number, tenantId?: string) => ({ streamSequence: seq, tenantId, cursor: `c${seq}`, eventId: `e${seq}`, data: seq, publishedAt: 0 }) as TidemarkEvent<number>;
const seqs = (events: TidemarkEvent<number>[] | undefined) => events?.map((e) => e.streamSequence);

describe("feed backlog", () => {
  it("backlog - slices a tenant's events above a position, and refuses a position below its floor", () => {
    const b = new Backlog<number>(10, 100, 1e9, () => 1);
    for (let s = 11; s <= 16; s++) b.push(ev(s, s % 2 ? "a" : "b"));
    expect(seqs(b.slice("a", 10, 16))).toEqual([11, 13, 15]);
    expect(seqs(b.slice("b", 12, 15))).toEqual([14]);
    expect(seqs(b.slice(undefined, 13, 16))).toEqual([14, 15, 16]);
    expect(b.slice("a", 9, 16)).toBeUndefined();
    expect(b.slice("a", 10, 17)).toBeUndefined();
  });

  it("backlog - keeps maxSequences behind its newest event and at most maxBytes; the floor follows", () => {
    const b = new Backlog<number>(0, 5, 1e9, () => 1);
    for (let s = 1; s <= 12; s++) b.push(ev(s, "a"));
    expect(b.floor).toBe(7);
    expect(seqs(b.slice("a", 7, 12))).toEqual([8, 9, 10, 11, 12]);
    const small = new Backlog<number>(0, 100, 3, () => 1);
    for (let s = 1; s <= 6; s++) small.push(ev(s, "a"));
    expect(small.floor).toBe(3);
  });

  it("backlog - prepends an older range in front; a removal restarts it empty", () => {
    const b = new Backlog<number>(20, 100, 1e9, () => 1);
    b.push(ev(21, "a"));
    b.push(ev(22, "b"));
    b.prepend([ev(18, "a"), ev(19, "b"), ev(20, "a")], 17);
    expect(b.floor).toBe(17);
    expect(seqs(b.slice("a", 17, 22))).toEqual([18, 20, 21]);
    expect(seqs(b.slice(undefined, 18, 22))).toEqual([19, 20, 21, 22]);
    b.jump(30);
    expect([b.floor, b.top]).toEqual([29, 29]);
    expect(b.slice("a", 29, 29)).toEqual([]);
  });

  it("backlog - prepends 200,000 events at once (a resume storm's cover read) and says when the byte bound dropped some", () => {
    const b = new Backlog<number>(200_000, 300_000, 1e9, () => 1);
    b.push(ev(200_001, "a"));
    b.prepend(Array.from({ length: 200_000 }, (_, i) => ev(i + 1, `t${i % 1000}`)), 0);
    expect(b.floor).toBe(0);
    expect(seqs(b.slice("t7", 0, 200_001))?.slice(0, 2)).toEqual([8, 1008]);
    expect(b.full).toBe(false);
    const small = new Backlog<number>(0, 100, 3, () => 1);
    for (let s = 1; s <= 3; s++) small.push(ev(s, "a"));
    expect(small.full).toBe(false);
    small.push(ev(4, "a"));
    expect(small.full).toBe(true);
    // 0.6 s alone; it timed out at vitest's 5 s beside other suites on the 2 cores.
  }, 30_000);
});
