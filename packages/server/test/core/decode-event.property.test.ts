/**
 * The event a replay hands out is the documented object, whatever the stored JSON holds: the same
 * fields, values and key order as the straightforward construction (parse, then build), also for
 * `__proto__` keys, any unicode, numbers past 2^53, with and without a tenant.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import { cursorPrefix, cursorWithPrefix, eventIdFor, type TidemarkEvent } from "@tidemark/shared";
import { decodeEvent } from "../../src/internal.js";

/** The construction decodeEvent must match: parse the body, then build the object field by field. */
function reference(incarnation: string, prefix: string, seq: number, body: string): TidemarkEvent {
  const env = JSON.parse(body) as { ts: number; t?: string; d: unknown };
  const event: TidemarkEvent = { eventId: eventIdFor(incarnation, seq), cursor: cursorWithPrefix(prefix, seq), streamSequence: seq, data: env.d, publishedAt: env.ts };
  if (env.t !== undefined) event.tenantId = env.t;
  return event;
}

const key = fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "d", "t", "v"), fc.string({ unit: "binary", maxLength: 8 }));
const bigNumber = fc.constantFrom("9007199254740993", "-12345678901234567890123", "1e308", "1e400", "0.1", "-0", "123456789012345678901234567890.5");
/** JSON text: fast-check's JSON with any unicode, plus objects whose keys include __proto__. */
const jsonText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.json({ stringUnit: "binary" }),
    bigNumber,
    fc.array(fc.tuple(key, tie("value") as fc.Arbitrary<string>), { maxLength: 4 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
    fc.array(tie("value") as fc.Arbitrary<string>, { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
  ),
})).value;

describe("decodeEvent (properties)", () => {
  it("event - a decoded event equals the reference construction for any stored JSON, tenant or not", () => {
    const prefix = cursorPrefix({ namespace: "ns", topic: "orders", incarnation: "k1x" });
    fc.assert(
      fc.property(
        jsonText,
        fc.option(fc.string({ unit: "binary", maxLength: 12 }), { nil: undefined }),
        fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.maxSafeNat()),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (d, tenant, seq, ts) => {
          const body = `{"v":1,"ts":${JSON.stringify(ts)}${tenant === undefined ? "" : `,"t":${JSON.stringify(tenant)}`},"d":${d}}`;
          const got = decodeEvent("k1x", prefix, seq, new TextEncoder().encode(body));
          const want = reference("k1x", prefix, seq, body);
          // node's deep strict equality: own keys (an own "__proto__" or "constructor" too) and prototypes.
          expect(isDeepStrictEqual(got, want)).toBe(true);
          expect(Object.keys(got)).toEqual(Object.keys(want));
          expect(JSON.stringify(got)).toBe(JSON.stringify(want));
          expect(isDeepStrictEqual(structuredClone(got), structuredClone(want))).toBe(true);
          expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
        },
      ),
      { numRuns: 500 },
    );
  });
});
