import { describe, it, expect } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { EventFrames, parseClientFrame, ProtocolError } from "./frames.js";
import type { TidemarkEvent } from "@tidemark/shared";

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

  it("frames - an event whose frame was dropped from the bound is no longer held by the cache", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const frames = new EventFrames(10_000);
    // Large events, few of which fit the bound: the evicted ones must be collectable at once,
    // not after 1,024 more (with 120 KB events that held ~120 MiB of events in the bridge).
    const refs = Array.from({ length: 20 }, (_, i) => {
      const event = { eventId: `i-${i}`, cursor: "s6t.c", streamSequence: i + 1, data: { pad: "x".repeat(4_000) }, publishedAt: 5 } as unknown as TidemarkEvent;
      frames.frame("h", event);
      return new WeakRef(event);
    });
    await new Promise((r) => setTimeout(r, 0)); // WeakRef targets stay alive until the job ends
    gc();
    expect(refs.slice(0, 15).filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect(refs.at(-1)!.deref()).toBeDefined(); // the newest is still cached
  });
});
