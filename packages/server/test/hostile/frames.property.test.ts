import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { MAX_CURSOR_LENGTH, ProtocolError, type ClientFrame } from "@tidemark/shared";
import { parseClientFrame } from "../../src/internal.js";

/** The parsed frame, or the ProtocolError; anything else thrown fails the property. */
function parseOrTyped(text: string): ClientFrame | ProtocolError {
  try {
    return parseClientFrame(text);
  } catch (err) {
    if (err instanceof ProtocolError && err.code === "PROTOCOL_ERROR") return err;
    throw err;
  }
}

const str = (max: number) => fc.string({ unit: "binary", minLength: 1, maxLength: Math.min(max, 200) });
const validFrame: fc.Arbitrary<ClientFrame> = fc.oneof(
  fc.record({ type: fc.constant("hello" as const), v: fc.constant(1), token: fc.option(str(8192), { nil: undefined }) }),
  fc.record({
    type: fc.constant("subscribe" as const),
    id: str(128),
    topic: str(256),
    tenantId: fc.option(str(1024), { nil: undefined }),
    mode: fc.constantFrom("hub" as const, "live" as const),
    // Any string, empty or past the cursor length: the hub answers a bad one with `reset`.
    cursor: fc.option(fc.string({ unit: "binary", maxLength: MAX_CURSOR_LENGTH + 200 }), { nil: undefined }),
  }),
  fc.record({ type: fc.constant("unsubscribe" as const), id: str(128) }),
  fc.record({ type: fc.constant("refresh" as const), token: str(8192) }),
  fc.constant({ type: "ping" as const }),
  fc.constant({ type: "pong" as const }),
);

/** The documented bounds of a parsed frame (docs/protocol.md). */
function withinBounds(f: ClientFrame): boolean {
  const ok = (s: unknown, max: number, optional = false) => (optional && s === undefined) || (typeof s === "string" && s.length >= 1 && s.length <= max);
  switch (f.type) {
    case "hello":
      return f.v === 1 && ok(f.token, 8192, true);
    case "subscribe":
      return ok(f.id, 128) && ok(f.topic, 256) && ok(f.tenantId, 1024, true) && (f.cursor === undefined || typeof f.cursor === "string") && (f.mode === "hub" || f.mode === "live");
    case "unsubscribe":
      return ok(f.id, 128);
    case "refresh":
      return ok(f.token, 8192);
    default:
      return f.type === "ping" || f.type === "pong";
  }
}

describe("bridge frame decoder (properties)", () => {
  it("frames - every valid client frame decodes to itself", () => {
    fc.assert(
      fc.property(validFrame, (frame) => {
        expect(parseClientFrame(JSON.stringify(frame))).toEqual(JSON.parse(JSON.stringify(frame)));
      }),
      { numRuns: 3_000 },
    );
  });

  it("frames - any text decodes to a frame within the documented bounds or raises ProtocolError", () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v)));
    fc.assert(
      fc.property(text, (t) => {
        const out = parseOrTyped(t);
        if (!(out instanceof ProtocolError)) expect(withinBounds(out)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("frames - objects with a known type and random fields decode within bounds or raise ProtocolError", () => {
    const field = fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.string({ minLength: 1000, maxLength: 10_000 }));
    const hostile = fc.record(
      {
        type: fc.constantFrom("hello", "subscribe", "unsubscribe", "refresh", "ping", "pong", "event", "welcome", "__proto__", "constructor"),
        v: fc.oneof(fc.constant(1), field),
        token: field,
        id: field,
        topic: field,
        tenantId: field,
        mode: fc.oneof(fc.constantFrom("hub", "live"), field),
        cursor: field,
      },
      { requiredKeys: ["type"] },
    );
    fc.assert(
      fc.property(hostile, (obj) => {
        const out = parseOrTyped(JSON.stringify(obj));
        if (!(out instanceof ProtocolError)) expect(withinBounds(out)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("frames - a truncated frame always raises ProtocolError", () => {
    fc.assert(
      fc.property(validFrame, fc.nat(), (frame, at) => {
        const text = JSON.stringify(frame);
        const cut = text.slice(0, at % text.length);
        const out = parseOrTyped(cut);
        expect(out).toBeInstanceOf(ProtocolError);
      }),
      { numRuns: 3_000 },
    );
  });

  it("frames - prototype keys in a frame do not leak into the parsed frame", () => {
    const out = parseClientFrame('{"type":"subscribe","id":"x","topic":"t","mode":"hub","__proto__":{"tenantId":"victim"},"constructor":{"prototype":{"cursor":"c"}}}');
    expect(out).toEqual({ type: "subscribe", id: "x", topic: "t", mode: "hub", tenantId: undefined, cursor: undefined });
    expect(({} as Record<string, unknown>).tenantId).toBeUndefined();
  });
});
