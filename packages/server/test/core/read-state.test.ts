import { describe, it, expect } from "vitest";
import { CursorMismatchError, InvalidArgumentError, InvalidCursorError, LimitExceededError, type ReadState } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("first page", () => {
  it("first page - cursorBefore gives the tenant's last N events, then the replay goes on with no duplicate", async () => {
    const t = fx.sync().topic<number>({ id: "fp.last" });
    for (let i = 0; i < 10; i++) {
      await t.publish({ data: i, tenantId: "a" });
      await t.publish({ data: 100 + i, tenantId: "b" });
    }
    const after = await t.cursorBefore({ tenantId: "a", last: 3 });
    expect((await collect(t.replay({ tenantId: "a", after }))).map((e) => e.data)).toEqual([7, 8, 9]);
    // Fewer retained than asked: all of them.
    const all = await t.cursorBefore({ tenantId: "a", last: 50 });
    expect((await collect(t.replay({ tenantId: "a", after: all }))).map((e) => e.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A tenant with nothing: the head.
    expect(await t.cursorBefore({ tenantId: "none", last: 5 })).toBe(await t.head());
    // The hub resumes from it like from any cursor: the page, then live, once each.
    const ac = new AbortController();
    const seen: number[] = [];
    const done = (async () => {
      for await (const e of t.hub({ tenantId: "a" }).subscribe({ after: await t.cursorBefore({ tenantId: "a", last: 2 }), signal: ac.signal })) {
        seen.push(e.data);
        if (seen.length === 4) ac.abort();
      }
    })().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    await t.publish({ data: 10, tenantId: "a" });
    await t.publish({ data: 11, tenantId: "a" });
    await done;
    expect(seen).toEqual([8, 9, 10, 11]);
  });

  it("first page - since a time, and the bounds refused with InvalidArgumentError", async () => {
    const t = fx.sync().topic<number>({ id: "fp.since" });
    await t.publish({ data: 1, tenantId: "a" });
    await new Promise((r) => setTimeout(r, 30));
    const mid = new Date();
    await t.publish({ data: 2, tenantId: "a" });
    await t.publish({ data: 3, tenantId: "a" });
    const after = await t.cursorBefore({ tenantId: "a", since: mid });
    expect((await collect(t.replay({ tenantId: "a", after }))).map((e) => e.data)).toEqual([2, 3]);
    expect(await failure(t.cursorBefore({ tenantId: "a", last: 501 }))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(t.cursorBefore({ tenantId: "a", last: 0 }))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(t.cursorBefore({ tenantId: "a", since: Number.NaN }))).toBeInstanceOf(InvalidArgumentError);
  });
});

describe("read state", () => {
  it("read state - never moves back; items above the cursor fold in when it passes them", async () => {
    const t = fx.sync().topic<number>({ id: "rs.basic" });
    const r = [];
    for (let i = 0; i < 6; i++) r.push(await t.publish({ data: i, tenantId: "a" }));
    const ada = t.readState({ principal: "ada", tenantId: "a" });
    expect(await ada.get()).toEqual({ cursor: undefined, items: [], version: 0 });
    let s = await ada.markRead(r[2]!.cursor);
    expect(s.cursor).toBe(r[2]!.cursor);
    s = await ada.markRead(r[1]!.cursor); // back: refused silently, the stored state answers
    expect(s).toMatchObject({ cursor: r[2]!.cursor, version: 1 });
    s = await ada.markItemRead(r[4]!.cursor);
    expect(s.items).toEqual([r[4]!.eventId]);
    s = await ada.markItemRead(r[1]!.cursor); // below the cursor: already read
    expect(s.items).toEqual([r[4]!.eventId]);
    s = await ada.markRead(r[4]!.cursor);
    expect(s).toEqual({ cursor: r[4]!.cursor, items: [], version: 3 });
    expect(await ada.get()).toEqual(s);
    // A cursor past the head, or of another topic, is refused.
    expect(await failure(ada.markRead(t.cursorAt(99)))).toBeInstanceOf(InvalidCursorError);
    const other = fx.sync().topic<number>({ id: "rs.other" });
    const o = await other.publish({ data: 1 });
    expect(await failure(ada.markRead(o.cursor))).toBeInstanceOf(CursorMismatchError);
    // Another tenant's event is not an item of this one.
    const b = await t.publish({ data: 9, tenantId: "b" });
    expect(await failure(ada.markItemRead(b.cursor))).toBeInstanceOf(InvalidArgumentError);
  });

  it("read state - at most 100 items above the cursor (LimitExceededError); a cursor past them folds them in", async () => {
    const t = fx.sync().topic<number>({ id: "rs.items" });
    const r = [];
    for (let i = 0; i < 101; i++) r.push(await t.publish({ data: i, tenantId: "a" }));
    const ada = t.readState({ principal: "ada", tenantId: "a" });
    for (let i = 0; i < 100; i++) await ada.markItemRead(r[i]!.cursor);
    expect((await ada.get()).items).toHaveLength(100);
    expect(await failure(ada.markItemRead(r[100]!.cursor))).toBeInstanceOf(LimitExceededError);
    expect(await ada.markRead(r[49]!.cursor)).toMatchObject({ cursor: r[49]!.cursor, items: r.slice(50, 100).map((e) => e.eventId) });
  });

  it("read state - another principal's state is neither readable nor writable through its own handle", async () => {
    const t = fx.sync().topic<number>({ id: "rs.users" });
    const e = await t.publish({ data: 1, tenantId: "a" });
    await t.readState({ principal: "ada", tenantId: "a" }).markRead(e.cursor);
    // Names that look like keys or other users' ids land on keys of their own.
    for (const principal of ["bob", "ada ", "ada.a", "*", ">", "ada\u0000"]) {
      expect(await t.readState({ principal, tenantId: "a" }).get()).toEqual({ cursor: undefined, items: [], version: 0 });
    }
    await t.readState({ principal: "bob", tenantId: "a" }).markItemRead(e.cursor);
    expect(await t.readState({ principal: "ada", tenantId: "a" }).get()).toEqual({ cursor: e.cursor, items: [], version: 1 });
    expect(() => t.readState({ principal: "", tenantId: "a" })).toThrow(InvalidArgumentError);
  });

  it("read state - concurrent writers from two Syncs never move the cursor back; watchers see every change", async () => {
    const a = fx.sync();
    const b = fx.sync({ namespace: a.namespace });
    const ta = a.topic<number>({ id: "rs.race" });
    const tb = b.topic<number>({ id: "rs.race" });
    const cursors: string[] = [];
    for (let i = 0; i < 40; i++) cursors.push((await ta.publish({ data: i, tenantId: "a" })).cursor);
    const ra = ta.readState({ principal: "ada", tenantId: "a" });
    const rb = tb.readState({ principal: "ada", tenantId: "a" });
    const seen: ReadState[] = [];
    const w = await rb.watch((s) => seen.push(s));
    for (let i = 0; i + 1 < cursors.length; i += 2) {
      const [low, high] = [cursors[i]!, cursors[i + 1]!];
      await Promise.all(i % 4 === 0 ? [ra.markRead(low), rb.markRead(high)] : [ra.markRead(high), rb.markRead(low)]);
      expect((await ra.get()).cursor).toBe(high);
    }
    await new Promise((r) => setTimeout(r, 100));
    w.close();
    const versions = seen.map((s) => s.version);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    expect(seen.at(-1)).toEqual(await ra.get());
  });
});
