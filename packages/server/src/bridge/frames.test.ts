import { describe, it, expect } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { EventFrames, frameBytes, parseClientFrame } from "./frames.js";
import { ErrorCode, errorClasses, ProtocolError, type TidemarkEvent } from "@tidemark/shared";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

describe("frames", () => {
  it("frames - parses every client frame and drops unknown fields", () => {
    expect(parseClientFrame('{"type":"hello","v":1,"token":"t","x":1}')).toEqual({ type: "hello", v: 1, token: "t" });
    expect(parseClientFrame('{"type":"subscribe","id":"a","topic":"n","mode":"hub","cursor":"s6t.x"}')).toEqual({
      type: "subscribe",
      id: "a",
      topic: "n",
      tenantId: undefined,
      mode: "hub",
      cursor: "s6t.x",
    });
    expect(parseClientFrame('{"type":"unsubscribe","id":"a"}')).toEqual({ type: "unsubscribe", id: "a" });
    expect(parseClientFrame('{"type":"refresh","token":"t2"}')).toEqual({ type: "refresh", token: "t2" });
    expect(parseClientFrame('{"type":"ping"}')).toEqual({ type: "ping" });
  });

  it("frames - a subscribe cursor is any string (the hub resets a bad one); only a non-string is refused", () => {
    for (const cursor of ["", "x".repeat(5_000), "garbage"]) {
      expect(parseClientFrame(JSON.stringify({ type: "subscribe", id: "a", topic: "n", mode: "hub", cursor }))).toMatchObject({ cursor });
    }
    for (const cursor of [5, null, {}, [], false]) {
      expect(() => parseClientFrame(JSON.stringify({ type: "subscribe", id: "a", topic: "n", mode: "hub", cursor }))).toThrow(ProtocolError);
    }
  });

  it("frames - refuses malformed JSON, unknown types, bad fields and other versions", () => {
    for (const bad of [
      "{",
      "null",
      "[]",
      '"hello"',
      '{"type":"nope"}',
      '{"type":"hello","v":2}',
      '{"type":"subscribe","id":"a","topic":"n","mode":"push"}',
      '{"type":"subscribe","id":"","topic":"n","mode":"hub"}',
      `{"type":"subscribe","id":"${"x".repeat(129)}","topic":"n","mode":"hub"}`,
      '{"type":"subscribe","id":"a","topic":"n","mode":"hub","tenantId":5}',
      '{"type":"refresh"}',
    ]) {
      expect(() => parseClientFrame(bad), bad).toThrow(ProtocolError);
    }
  });

  it("frames - a refused frame throws the shared table's ProtocolError (code PROTOCOL_ERROR, the class its code names)", () => {
    let thrown: unknown;
    try {
      parseClientFrame("{");
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(errorClasses[ErrorCode.ProtocolError]);
    expect(thrown).toMatchObject({ name: "ProtocolError", code: "PROTOCOL_ERROR", message: "malformed JSON" });
  });

  it("frames - an event frame is serialised once per (event, hub)", () => {
    const frames = new EventFrames();
    const event = { eventId: "i-1", cursor: "s6t.c", streamSequence: 1, data: { a: 1 }, publishedAt: 5 } as unknown as TidemarkEvent;
    const a = frames.frame("h1", event);
    expect(JSON.parse(a.text)).toEqual({ type: "event", hub: "h1", event });
    expect(frames.frame("h1", event)).toBe(a);
    expect(JSON.parse(frames.frame("h2", event).text).hub).toBe("h2");
  });

  it("frames - only the most recent frames are kept, within the byte bound: an older one is rebuilt", () => {
    const frames = new EventFrames(10_000);
    const events = Array.from({ length: 50 }, (_, i) => ({ eventId: `i-${i}`, cursor: "s6t.c", streamSequence: i + 1, data: { pad: "x".repeat(400) }, publishedAt: 5 }) as unknown as TidemarkEvent);
    const first = events.map((e) => frames.frame("h", e));
    // About 460 bytes of text each, counted twice (text and bytes): the last ~10 are kept.
    expect(frames.frame("h", events[49]!)).toBe(first[49]);
    expect(frames.frame("h", events[45]!)).toBe(first[45]);
    const rebuilt = frames.frame("h", events[0]!);
    expect(rebuilt).not.toBe(first[0]);
    expect(rebuilt.text).toBe(first[0]!.text);
  });

  it("frames - the cache holds frames, not events: an event no one else holds is collected", async () => {
    const frames = new EventFrames();
    let event: TidemarkEvent | undefined = { eventId: "i-1", cursor: "s6t.c", streamSequence: 1, data: Array.from({ length: 1_000 }, () => ({})), publishedAt: 5 } as unknown as TidemarkEvent;
    const weak = new WeakRef(event);
    frames.frame("h", event);
    event = undefined;
    // WeakRefs are cleared only after the job that made them.
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(weak.deref()).toBeUndefined();
  });

  it("frames - a frame counts its text and its UTF-8 wire bytes: non-ASCII text counts up to 5 bytes a character", () => {
    const frames = new EventFrames(1_000_000);
    const ascii = { eventId: "i-1", cursor: "s6t.c", streamSequence: 1, data: "x".repeat(1_000), publishedAt: 5 } as unknown as TidemarkEvent;
    const cjk = { eventId: "i-2", cursor: "s6t.c", streamSequence: 2, data: "\u4e00".repeat(1_000), publishedAt: 5 } as unknown as TidemarkEvent;
    const a = frames.frame("h", ascii).text;
    expect(frames.bytes).toBe(2 * a.length);
    const c = frames.frame("h", cjk).text;
    // Two bytes a character of text (a two-byte string) and three of UTF-8.
    expect(frames.bytes - 2 * a.length).toBeGreaterThanOrEqual(2 * c.length + Buffer.byteLength(c));
    expect(frameBytes(c)).toBe(5 * c.length);
  });
});

