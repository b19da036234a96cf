import { describe, it, expect } from "vitest";
import type { TidemarkEvent } from "@tidemark/shared";
import { Ring } from "./ring.js";

const ev = (seq: number) => ({ streamSequence: seq }) as TidemarkEvent;

describe("ring", () => {
  it("ring - evicts by count and raises the floor to the last evicted sequence", () => {
    const ring = new Ring(10, 3, 1_000_000);
    for (const s of [12, 15, 20, 21]) ring.push(ev(s), 1);
    expect(ring.length).toBe(3);
    expect(ring.floor).toBe(12);
    expect(ring.at(ring.start)!.streamSequence).toBe(15);
    expect(ring.at(ring.start - 1)).toBeUndefined();
    expect(ring.indexAfter(15)).toBe(ring.start + 1);
    expect(ring.indexAfter(9)).toBe(ring.start);
    expect(ring.indexAfter(21)).toBe(ring.end);
  });

  it("ring - evicts by bytes, keeps at least the newest event", () => {
    const ring = new Ring(0, 100, 10);
    ring.push(ev(1), 4);
    ring.push(ev(2), 4);
    ring.push(ev(3), 4);
    expect(ring.length).toBe(2);
    expect(ring.bytes).toBe(8);
    ring.push(ev(4), 50);
    expect(ring.length).toBe(1);
    expect(ring.floor).toBe(3);
  });

  it("ring - wraps around many times and stays ordered", () => {
    const ring = new Ring(0, 5, 1_000_000);
    for (let s = 1; s <= 1000; s++) ring.push(ev(s), 1);
    const seqs = [];
    for (let i = ring.start; i < ring.end; i++) seqs.push(ring.at(i)!.streamSequence);
    expect(seqs).toEqual([996, 997, 998, 999, 1000]);
    expect(ring.floor).toBe(995);
    ring.reset(2000);
    expect(ring.length).toBe(0);
    expect(ring.floor).toBe(2000);
  });
});
