import { describe, expect, it } from "vitest";
import type { Feed } from "./model.js";
import { WireTable } from "./wire-table.js";

const feed = (key: string) => ({ key }) as Feed;

describe("wire table", () => {
  it("wire table - a hub's events reach the feeds accepted on it, and no other", () => {
    const table = new WireTable();
    const [a, b, c] = [feed("a"), feed("b"), feed("c")];
    const [ia, ib] = [table.add(a), table.add(b)];
    table.add(c);
    expect(table.onHub("h1")).toEqual([]);
    expect(table.accept(ia, "h1")).toBe(a);
    expect(table.accept(ib, "h1")).toBe(b);
    expect(table.onHub("h1")).toEqual([a, b]);
    expect(table.onHub("h2")).toEqual([]);
    expect(table.has(c)).toBe(true);
  });

  it("wire table - a feed subscribed again drops its old id, and ids are never reused", () => {
    const table = new WireTable();
    const a = feed("a");
    const first = table.add(a);
    table.accept(first, "h1");
    const second = table.add(a);
    expect(second).not.toBe(first);
    expect(table.feed(first)).toBeUndefined();
    expect(table.feed(second)).toBe(a);
    // The old subscription's hub no longer reaches the feed until the new one is accepted.
    expect(table.onHub("h1")).toEqual([]);
    table.clear();
    expect(table.add(a)).not.toBe(second);
  });

  it("wire table - an ended subscription or a removed feed leaves no trace", () => {
    const table = new WireTable();
    const [a, b] = [feed("a"), feed("b")];
    const ia = table.add(a);
    const ib = table.add(b);
    table.accept(ia, "h");
    table.accept(ib, "h");
    expect(table.removeId(ia)).toBe(a);
    expect(table.removeId(ia)).toBeUndefined();
    expect(table.has(a)).toBe(false);
    expect(table.remove(b)).toBe(ib);
    expect(table.remove(b)).toBeUndefined();
    expect(table.onHub("h")).toEqual([]);
  });
});
