import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { utf8Text } from "./utf8-text.js";

const reference = new TextDecoder();
const encoder = new TextEncoder();
const BOM = [0xef, 0xbb, 0xbf];

/** The bytes as a view at an offset inside a larger buffer, as nats.js hands payloads out. */
function inside(bytes: readonly number[]): Uint8Array {
  const backing = new Uint8Array(bytes.length + 7);
  backing.fill(0x41);
  backing.set(bytes, 5);
  return backing.subarray(5, 5 + bytes.length);
}

describe("utf8Text", () => {
  const text = utf8Text();

  it("utf8-text - uses Buffer's utf8Slice on Node (the self-check passes)", () => {
    let called = 0;
    const slice = (Buffer.prototype as unknown as { utf8Slice: (s: number, e: number) => string }).utf8Slice;
    const counting = { prototype: { utf8Slice(this: Uint8Array, s: number, e: number) { called++; return slice.call(this, s, e); } } };
    const t = utf8Text({ buffer: counting });
    expect(t(inside([0xc3, 0xa9]))).toBe("é"); // the self-check's samples, then the call
    const afterCheck = called;
    expect(t(inside([...BOM, 0x61]))).toBe("a");
    expect(called).toBe(afterCheck + 1); // one utf8Slice per decode: the fast path was kept
  });

  it("utf8-text - equals TextDecoder over arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }), (bytes) => {
        const view = inside(bytes);
        expect(text(view)).toBe(reference.decode(view));
      }),
      { numRuns: 2_000 },
    );
  });

  it("utf8-text - equals TextDecoder over the encoding of arbitrary strings (lone surrogates too)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), fc.boolean(), (s, bom) => {
        const bytes = [...(bom ? BOM : []), ...encoder.encode(s)];
        const view = inside(bytes);
        expect(text(view)).toBe(reference.decode(view));
      }),
      { numRuns: 2_000 },
    );
  });

  it("utf8-text - a leading BOM is dropped once, a later one kept; empty and invalid input", () => {
    expect(text(inside([...BOM, 0x61]))).toBe("a");
    expect(text(inside([...BOM, ...BOM]))).toBe("\ufeff");
    expect(text(inside([0x61, ...BOM]))).toBe("a\ufeff");
    expect(text(inside(BOM))).toBe("");
    expect(text(inside([0xef, 0xbb]))).toBe(reference.decode(inside([0xef, 0xbb])));
    expect(text(new Uint8Array(0))).toBe("");
    expect(text(inside([0xff, 0x61, 0xc3]))).toBe("\ufffda\ufffd");
    expect(text(inside([0xed, 0xa0, 0x80]))).toBe(reference.decode(inside([0xed, 0xa0, 0x80])));
  });

  it("utf8-text - falls back to the TextDecoder when utf8Slice is missing or disagrees", () => {
    const wrong = { prototype: { utf8Slice: () => "wrong" } };
    expect(utf8Text({ buffer: wrong })(inside([0x62]))).toBe("b");
    // Agrees on valid text but not on invalid bytes: the samples include invalid sequences.
    const lossy = {
      prototype: {
        utf8Slice(this: Uint8Array, s: number, e: number) {
          return reference.decode(this.subarray(s, e)).replaceAll("\ufffd", "?");
        },
      },
    };
    expect(utf8Text({ buffer: lossy })(inside([0xff]))).toBe("\ufffd");
    expect(utf8Text({ buffer: undefined })(inside([0xc3, 0xa9]))).toBe("é");
  });
});
