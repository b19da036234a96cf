import { encodeCursor, type TidemarkEvent } from "@tidemark/shared";
import { describe, expect, it } from "vitest";
import { FeedLog, TabView, feedKey, isSavedFeed } from "./feed-log.js";
import type { FeedItem } from "./types.js";

const cursor = (sequence: number, incarnation = "inc1") => encodeCursor({ namespace: "ns", topic: "t", incarnation, sequence });
const event = (sequence: number, incarnation = "inc1"): TidemarkEvent => ({
  eventId: `${incarnation}-${sequence}`,
  cursor: cursor(sequence, incarnation),
  streamSequence: sequence,
  data: { sequence },
  publishedAt: 1,
});
const empty = (key = "k") => ({ key, lastN: 0, items: [] });
const ids = (items: FeedItem[]) => items.map((i) => (i.kind === "event" ? i.event.streamSequence : `gap${i.n}`));

describe("feed log", () => {
  it("feed log - keeps events in order and drops repeats", () => {
    const log = new FeedLog(empty(), 100);
    for (const s of [1, 2, 2, 3, 1, 5, 4, 6]) log.addEvent(event(s));
    expect(ids(log.items)).toEqual([1, 2, 3, 5, 6]);
    expect(log.items.map((i) => i.n)).toEqual([1, 2, 3, 4, 5]);
    expect(log.cursor).toBe(cursor(6));
  });

  it("feed log - a cursor of a known topic with a sequence that is not canonical base 36 is no position", () => {
    const log = new FeedLog(empty(), 100);
    log.addEvent(event(7));
    const prefix = cursor(7).slice(0, cursor(7).lastIndexOf(".") + 1);
    // "07", "-1", "1.5": not what the codec makes; the event is then told apart by its id only.
    for (const tail of ["07", "-1", "8x!", ""]) log.addEvent({ ...event(8), eventId: `odd-${tail}`, cursor: (prefix + tail) as never });
    expect(log.items.map((i) => (i.kind === "event" ? i.event.eventId : "gap"))).toEqual(["inc1-7", "odd-07", "odd--1", "odd-8x!", "odd-"]);
    // Without a position, the id still drops a repeat.
    expect(log.addEvent({ ...event(8), eventId: "odd-07", cursor: `${prefix}07` as never })).toBeUndefined();
  });

  it("feed log - history is bounded, numbering goes on", () => {
    const log = new FeedLog(empty(), 3);
    for (let s = 1; s <= 10; s++) log.addEvent(event(s));
    expect(ids(log.items)).toEqual([8, 9, 10]);
    expect(log.lastN).toBe(10);
  });

  it("feed log - a reset keeps history, adds one gap marker and resumes from the head", () => {
    const log = new FeedLog(empty(), 100);
    log.addEvent(event(1));
    log.addEvent(event(2));
    log.addGap("retention_gap", cursor(40), "expired", 7);
    log.addGap("retention_gap", cursor(41), "expired again", 8);
    expect(log.addEvent(event(41))).toBeUndefined();
    log.addEvent(event(42));
    expect(ids(log.items)).toEqual([1, 2, "gap4", 42]);
    expect(log.items[2]).toMatchObject({ kind: "gap", reason: "retention_gap", message: "expired again" });
  });

  it("feed log - a re-created topic (new incarnation) numbers from the start again", () => {
    const log = new FeedLog(empty(), 100);
    log.addEvent(event(9));
    log.addGap("cursor_mismatch", cursor(0, "inc2"), "topic re-created");
    log.addEvent(event(1, "inc2"));
    expect(ids(log.items)).toEqual([9, "gap2", 1]);
  });

  it("feed log - resumes from what was saved", () => {
    const first = new FeedLog(empty(), 100);
    first.addEvent(event(1));
    first.addEvent(event(2));
    const again = new FeedLog(structuredClone(first.save()), 100);
    expect(again.addEvent(event(2))).toBeUndefined();
    expect(again.addEvent(event(3))).toMatchObject({ n: 3 });
  });

  it("feed log - keys tell modes and tenants apart", () => {
    expect(feedKey("hub", "a", "t1")).not.toBe(feedKey("live", "a", "t1"));
    expect(feedKey("hub", "a", undefined)).not.toBe(feedKey("hub", "a", ""));
  });
});

describe("tab view", () => {
  it("tab view - lets each item through once, in order, across repeated snapshots", () => {
    const log = new FeedLog(empty(), 100);
    const items = [1, 2, 3].map((s) => log.addEvent(event(s))!);
    const view = new TabView();
    // A push that overtook the snapshot, then the snapshot, then a repeat.
    expect(ids(view.accept([items[2]!]))).toEqual([3]);
    expect(ids(view.accept(items))).toEqual([1, 2]);
    expect(view.accept(items)).toEqual([]);
    const gap = log.addGap("retention_gap", cursor(10), "x");
    expect(ids(view.accept([gap, gap]))).toEqual(["gap4"]);
    expect(view.accept([gap])).toEqual([]);
  });

  it("tab view - an engine that lost unsaved items renumbers them; ids still dedupe", () => {
    const view = new TabView();
    const before = new FeedLog(empty(), 100);
    view.accept([1, 2, 3].map((s) => before.addEvent(event(s))!));
    const after = new FeedLog({ key: "k", lastN: 1, cursor: cursor(1), items: [] }, 100);
    const replayed = [2, 3, 4].map((s) => after.addEvent(event(s))!);
    expect(ids(view.accept(replayed))).toEqual([4]);
  });
});

describe("feed log watermark", () => {
  it("feed log - a caught_up watermark moves the cursor forward only", () => {
    const log = new FeedLog(empty(), 10);
    log.addEvent(event(5));
    log.addWatermark(cursor(3));
    expect(log.cursor).toBe(cursor(5));
    log.addWatermark(cursor(9));
    expect(log.cursor).toBe(cursor(9));
    expect(log.addEvent(event(8))).toBeUndefined();
    expect(log.addEvent(event(10))).toMatchObject({ n: 2 });
  });
});

describe("saved feed", () => {
  it("saved feed - a record of another shape is not taken for one", () => {
    const log = new FeedLog(empty(), 10);
    log.addEvent(event(1));
    log.addGap("retention_gap", cursor(5), "x");
    expect(isSavedFeed(structuredClone(log.save()))).toBe(true);
    expect(isSavedFeed(undefined)).toBe(false);
    expect(isSavedFeed({ key: "k", lastN: "1", items: [] })).toBe(false);
    expect(isSavedFeed({ key: "k", lastN: 1, items: [{ kind: "event", n: 1 }] })).toBe(false);
    expect(isSavedFeed({ key: "k", lastN: 1, cursor: 5, items: [] })).toBe(false);
  });
});
