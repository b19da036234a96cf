import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeEnvelope, encodeEnvelope, type Envelope } from "./envelope.js";

describe("envelope", () => {
  it("envelope - encodes to the bytes of JSON.stringify of the envelope, keys v, ts, t, d", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.string(), { nil: undefined }), fc.integer({ min: 0 }), (d, t, ts) => {
        const envelope: Envelope = t === undefined ? { v: 1, ts, d } : { v: 1, ts, t, d };
        const text = encodeEnvelope(envelope);
        expect(text).toBe(JSON.stringify(envelope));
        expect(decodeEnvelope(text)).toEqual(JSON.parse(JSON.stringify(envelope)));
      }),
    );
  });
});
