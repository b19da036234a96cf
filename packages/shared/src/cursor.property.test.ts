import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { cursorPrefix, cursorWithPrefix, decodeCursor, encodeCursor, isCursor, MAX_CURSOR_LENGTH } from "./cursor.js";
import { InvalidCursorError } from "./errors.js";
import { NAMESPACE_PATTERN, TOPIC_ID_PATTERN } from "./names.js";

// Names as the core makes them (validated namespaces and topic ids), and any text besides.
const namespace = fc.stringMatching(NAMESPACE_PATTERN);
const topic = fc.stringMatching(TOPIC_ID_PATTERN);
const text = fc.string({ unit: "binary", maxLength: 40 });
const parts = fc.record({
  namespace: fc.oneof(namespace, text),
  topic: fc.oneof(topic, text),
  incarnation: fc.oneof(fc.constant(""), fc.stringMatching(/^[0-9a-z]{1,16}$/), text),
  sequence: fc.oneof(fc.nat(1000), fc.maxSafeNat()),
});

/** Runs `fn`; returns its value, or the error if it is an InvalidCursorError; rethrows anything else. */
function decodeOrTyped(value: unknown) {
  try {
    return decodeCursor(value);
  } catch (err) {
    if (err instanceof InvalidCursorError && err.code === "INVALID_CURSOR") return err;
    throw err;
  }
}

describe("cursor codec (properties)", () => {
  it("cursor - any parts round-trip, and the prefix form is the same cursor", () => {
    fc.assert(
      fc.property(parts, (p) => {
        const c = encodeCursor(p);
        if (c.length > MAX_CURSOR_LENGTH) {
          expect(decodeOrTyped(c)).toBeInstanceOf(InvalidCursorError);
          return;
        }
        expect(decodeCursor(c)).toEqual(p);
        expect(cursorWithPrefix(cursorPrefix(p), p.sequence)).toBe(c);
        expect(isCursor(c)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("cursor - any value either decodes or raises InvalidCursorError, and what decodes has well-typed parts", () => {
    const anything = fc.oneof(fc.anything(), fc.string(), fc.string({ unit: "binary" }), fc.string().map((s) => `s6t.${s}`));
    fc.assert(
      fc.property(anything, (value) => {
        const out = decodeOrTyped(value);
        if (out instanceof InvalidCursorError) return;
        expect(typeof out.namespace).toBe("string");
        expect(typeof out.topic).toBe("string");
        expect(Number.isSafeInteger(out.sequence) && out.sequence >= 0).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("cursor - a truncated cursor is an InvalidCursorError or the same topic at a prefix of its sequence", () => {
    fc.assert(
      fc.property(parts, fc.nat(), (p, at) => {
        const c = encodeCursor(p);
        if (c.length > MAX_CURSOR_LENGTH) return;
        const cut = c.slice(0, at % c.length);
        const out = decodeOrTyped(cut);
        if (out instanceof InvalidCursorError) return;
        expect({ ...out, sequence: p.sequence }).toEqual(p);
        expect(p.sequence.toString(36).startsWith(out.sequence.toString(36))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });

  it("cursor - a sequence that is not a non-negative safe integer is an InvalidCursorError", () => {
    const bad = fc.oneof(fc.integer({ max: -1 }), fc.double().filter((d) => !Number.isSafeInteger(d) || d < 0), fc.constant(Number.MAX_SAFE_INTEGER + 1));
    fc.assert(
      fc.property(bad, (sequence) => {
        expect(() => encodeCursor({ namespace: "a", topic: "b", incarnation: "", sequence })).toThrow(InvalidCursorError);
      }),
    );
  });
});
