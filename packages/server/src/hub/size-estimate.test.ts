import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { InvalidArgumentError, type TidemarkEvent } from "@tidemark/shared";
import { EVENT_OVERHEAD, estimateEventSize, estimateValueHeap, eventSizer, KnownShapes, sizeOnce } from "./size-estimate.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const eventOf = (data: unknown) => ({ eventId: "i-1", cursor: "s6t.c", streamSequence: 1, data, publishedAt: 5 }) as unknown as TidemarkEvent;

/**
 * Heap one `JSON.parse(text(i))` holds once the hub has sized it,
 * measured over many parses (each its own text, so no two share a string or a key), after full
 * collections.
 */
function measuredHeap(text: (i: number) => string): number {
  // Enough copies for a few hundred KiB of JSON: heapUsed moves by more than objects do.
  const copies = Math.max(40, Math.ceil(800_000 / text(0).length));
  const texts = Array.from({ length: copies }, (_, i) => text(i));
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const held = texts.map((t) => JSON.parse(t) as unknown);
  // What a hub does with an event too: the estimate lists each object's keys, and V8 then caches
  // them on the object's map. (JSON.stringify leaves nothing per object; left out, as it grows
  // V8's number-to-string cache on the first call, which is not the event's.)
  for (const v of held) estimateValueHeap(v);
  gc();
  gc();
  const per = (process.memoryUsage().heapUsed - before) / copies;
  expect(held.length).toBe(copies);
  return per;
}

/** Adversarial payload shapes of size `n`, unique per `i` where V8 could share (keys, short strings). */
const shapes: Record<string, (n: number, i: number) => unknown> = {
  "arrays of empty objects": (n) => Array.from({ length: n }, () => ({})),
  "arrays of empty arrays": (n) => Array.from({ length: n }, () => []),
  "deep nesting": (n) => {
    let v: unknown[] = [];
    for (let d = 0; d < n; d++) v = [v];
    return v;
  },
  "nested objects": (n) => {
    let v: unknown = 0;
    for (let d = 0; d < n; d++) v = { a: v };
    return v;
  },
  "objects of one new key each": (n, i) => Array.from({ length: n }, (_, j) => ({ [`${i}_${j}`]: 0 })),
  "many small keys in one object": (n, i) => Object.fromEntries(Array.from({ length: n }, (_, j) => [`${i}_${j}`, 0])),
  // Around the dictionary-mode threshold (128 keys): shared maps below it, entries above.
  "one set of keys repeated": (n, i) => Array.from({ length: 20 }, () => Object.fromEntries(Array.from({ length: 50 + (n % 200) }, (_, j) => [`${i}_${j}`, 1.5]))),
  "many small numbers": (n) => Array.from({ length: n }, (_, j) => j % 100),
  "boxed numbers": (n) => ["", ...Array.from({ length: n }, (_, j) => j + 0.5)],
  "short strings": (n, i) => Array.from({ length: n }, (_, j) => (i * 100_000 + j).toString(36)),
  "two-byte strings": (n, i) => [`${i}`, "\u4e00".repeat(n)],
  "records": (n, i) => Array.from({ length: n }, (_, j) => ({ id: `${i}-${j}`, name: "widget", price: j + 0.25, tags: ["a", "b"] })),
};

describe("size estimate", () => {
  for (const [name, make] of Object.entries(shapes)) {
    it(`size estimate - ${name}: at least the heap JSON.parse makes of it, and at least its JSON length`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 100, max: 1_500 }), (n) => {
          const sample = make(n, 0);
          const estimate = estimateValueHeap(sample);
          // Noise only adds (the test worker allocates too: up to ~100 KiB between two samples):
          // the least of up to three samples, and 5% plus a few words of slack per copy. The
          // misses this is for are larger (the enum cache of a new key: 30%; JSON length: 20x).
          const slack = (e: number) => e * 1.05 + 64;
          let measured = Infinity;
          for (let k = 0; k < 3 && measured > slack(estimate); k++) measured = Math.min(measured, measuredHeap((i) => JSON.stringify(make(n, i + 1 + k * 10_000))));
          expect(slack(estimate), `${name}, n=${n}: estimate ${estimate}, measured ${measured}`).toBeGreaterThanOrEqual(measured);
          expect(estimateEventSize(eventOf(sample))).toBeGreaterThanOrEqual(JSON.stringify(sample).length + EVENT_OVERHEAD);
        }),
        { numRuns: 6 },
      );
    }, 60_000);
  }

  it("size estimate - an event's envelope (ids, cursor, tenant, timestamp) is within EVENT_OVERHEAD", () => {
    const envelope = measuredHeap((i) => JSON.stringify({ eventId: `0123456789abcdefghijklmn-${i}`, cursor: `s6t.0123456789abcdefghijklmnopqrstuvwxyz.${i}`, streamSequence: 2 ** 40 + i, tenantId: `tenant-${i}`, data: null, publishedAt: Date.now() + i }));
    expect(envelope).toBeLessThanOrEqual(EVENT_OVERHEAD);
  });

  it("size estimate - any JSON value: never below its JSON length, and never throws", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (data) => {
        const json = JSON.stringify(data) ?? "";
        expect(estimateEventSize(eventOf(data))).toBeGreaterThanOrEqual(json.length + EVENT_OVERHEAD);
      }),
      { numRuns: 500 },
    );
  });

  it("size estimate - nesting deeper than JSON.stringify can walk is estimated, not thrown", () => {
    const deep = JSON.parse("[".repeat(200_000) + "]".repeat(200_000)) as unknown;
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(estimateEventSize(eventOf(deep))).toBeGreaterThanOrEqual(200_000 * 72);
  });

  it("size estimate - arrays of empty objects cost about 20 times their JSON length", () => {
    const data = Array.from({ length: 1_000 }, () => ({}));
    expect(estimateEventSize(eventOf(data))).toBeGreaterThan(20 * JSON.stringify(data).length);
  });

  it("size estimate - sizeOnce calls sizeOf once for an event asked for in turn (the backlog, then a hub's ring)", () => {
    let calls = 0;
    const sizeOf = sizeOnce(() => ++calls * 100);
    const a = eventOf("a");
    const b = eventOf("a");
    expect([sizeOf(a), sizeOf(a), sizeOf(b), sizeOf(b)]).toEqual([100, 100, 200, 200]);
    expect(calls).toBe(2);
  });

  it("size estimate - a custom sizeOf that returns no size (NaN, negative, not a number) is an InvalidArgumentError, not an unbounded window", () => {
    for (const bad of [NaN, -1, Infinity, "12", undefined]) {
      const sizeOf = sizeOnce(() => bad as number);
      expect(() => sizeOf(eventOf("a")), String(bad)).toThrow(InvalidArgumentError);
    }
  });

  it("size estimate - a shape the registry's events repeat is charged its maps once; unique keys are charged in every event", () => {
    const known = new KnownShapes();
    const record = (i: number) => ({ itemId: `item-${i}`, kind: "stock", by: { id: "u-1", name: "Ada" } });
    const first = estimateValueHeap(record(1), known);
    const second = estimateValueHeap(record(2), known);
    expect(first - second).toBe(5 * 192 + 2 * "itemIdkindbyidname".length);
    expect(estimateValueHeap(record(3), known)).toBe(second);
    // An attacker's keys are new in every event: never cheaper than without the known shapes.
    const hostile = (i: number) => Array.from({ length: 50 }, (_, j) => ({ [`k${i}_${j}`]: 0 }));
    for (let i = 0; i < 5; i++) expect(estimateValueHeap(hostile(i), known)).toBe(estimateValueHeap(hostile(i)));
  });

  it("size estimate - the known shapes are bounded: once full, a new shape is charged once in each event that has it", () => {
    const known = new KnownShapes(10);
    estimateValueHeap(Object.fromEntries(Array.from({ length: 10 }, (_, j) => [`filler${j}`, 0])), known);
    expect(known.keys).toBe(10);
    const repeated = (i: number) => Array.from({ length: 30 }, (_, j) => ({ a: i + j, b: "x" }));
    expect(estimateValueHeap(repeated(1), known)).toBe(estimateValueHeap(repeated(1)));
    expect(estimateValueHeap(repeated(2), known)).toBe(estimateValueHeap(repeated(2)));
    expect(known.keys).toBe(10);
  });

  it("size estimate - eventSizer: a registry's default sizeOf; a 226-character record costs about 4 times its JSON length, not 20", () => {
    const sizeOf = eventSizer();
    const record = (i: number) => eventOf({ itemId: `item-${i}`, kind: "stock", count: i, at: new Date(i).toISOString(), by: { id: `u-${i}`, name: "Ada Lovelace" }, note: "restocked from the north warehouse ".repeat(4) });
    sizeOf(record(0));
    const size = sizeOf(record(1));
    expect(size).toBeLessThan(5 * JSON.stringify(record(1).data).length);
    expect(size).toBeGreaterThanOrEqual(JSON.stringify(record(1).data).length + EVENT_OVERHEAD);
  });
});

