import { describe, it, expect } from "vitest";
import { CursorMismatchError, InvalidArgumentError, InvalidCursorError } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

async function seed(n: number, tenants: string[] = []) {
  const t = fx.sync().topic<number>({ id: "feed.events" });
  const receipts = [];
  for (let i = 1; i <= n; i++) {
    const tenantId = tenants.length ? tenants[i % tenants.length] : undefined;
    receipts.push(await t.publish({ data: i, tenantId }));
  }
  return { t, receipts };
}

describe("replay", () => {
  it("replay - after and until bound the sequence range (after exclusive, until inclusive)", async () => {
    const { t, receipts } = await seed(6);
    const got = await collect(t.replay({ after: receipts[1]!.cursor, until: receipts[4]!.cursor }));
    expect(got.map((e) => e.data)).toEqual([3, 4, 5]);
    expect(got.map((e) => e.cursor)).toEqual(receipts.slice(2, 5).map((r) => r.cursor));
  });

  it("replay - without until it captures the head at start and is finite", async () => {
    const { t } = await seed(3);
    const seen: number[] = [];
    for await (const e of t.replay()) {
      seen.push(e.data);
      if (e.data === 1) await t.publish({ data: 100 });
    }
    expect(seen).toEqual([1, 2, 3]);
  });

  it("replay - without after it starts at the first retained event; after the head it yields nothing", async () => {
    const { t } = await seed(3);
    expect((await collect(t.replay())).map((e) => e.data)).toEqual([1, 2, 3]);
    expect(await collect(t.replay({ after: await t.head() }))).toEqual([]);
  });

  it("replay - a tenant read is filtered and other tenants in between are never a gap", async () => {
    const { t, receipts } = await seed(9, ["a", "b", "c"]);
    const a = await collect(t.replay({ tenantId: "a", after: receipts[0]!.cursor }));
    expect(a.map((e) => e.data)).toEqual([3, 6, 9]);
    expect(a.every((e) => e.tenantId === "a")).toBe(true);
    expect(await collect(t.replay({ tenantId: "nobody" }))).toEqual([]);
  });

  it("replay - until at or before after yields nothing", async () => {
    const { t, receipts } = await seed(3, ["a"]);
    expect(await collect(t.replay({ after: receipts[2]!.cursor, until: receipts[0]!.cursor }))).toEqual([]);
    expect(await collect(t.replay({ after: receipts[1]!.cursor, until: receipts[1]!.cursor }))).toEqual([]);
    expect(await collect(t.replay({ after: receipts[2]!.cursor, until: t.cursorAt(0), tenantId: "a" }))).toEqual([]);
    // Cursors are still checked: a malformed until is an error, not an empty replay.
    expect(await failure(t.replay({ after: receipts[2]!.cursor, until: "nope" }))).toBeInstanceOf(InvalidCursorError);
  });

  it("replay - malformed and foreign cursors are typed errors raised from iteration", async () => {
    const { t } = await seed(2);
    const other = fx.sync().topic({ id: "other.topic" });
    const iterable = t.replay({ after: "s6t.garbage" }); // must not throw synchronously
    expect(await failure(iterable)).toBeInstanceOf(InvalidCursorError);
    for (const bad of ["", "nope", "s6t.", "s6t.e30.1", "s6t.WzEsImEiLCJiIiwiIl0.-1", "x".repeat(5000)]) {
      expect(await failure(t.replay({ after: bad }))).toBeInstanceOf(InvalidCursorError);
    }
    const err = await failure(t.replay({ after: other.cursorAt(1) }));
    expect(err).toBeInstanceOf(CursorMismatchError);
    expect(err.code).toBe("CURSOR_MISMATCH");
    expect(() => t.cursorSequence(other.cursorAt(1))).toThrow(CursorMismatchError);
  });
});

describe("follow", () => {
  it("follow - replays, then stays open for new events until the signal aborts", async () => {
    const { t, receipts } = await seed(3);
    const ac = new AbortController();
    const seen: number[] = [];
    const done = (async () => {
      for await (const e of t.follow({ after: receipts[0]!.cursor, signal: ac.signal })) {
        seen.push(e.data);
        if (e.data === 3) await t.publish({ data: 4 });
        if (e.data === 4) ac.abort();
      }
    })();
    await done;
    expect(seen).toEqual([2, 3, 4]);
  });

  it("follow - a tenant follower sees only its tenant, live, in order", async () => {
    const t = fx.sync().topic<number>({ id: "tenant.follow" });
    const ac = new AbortController();
    const seen: number[] = [];
    const done = (async () => {
      for await (const e of t.follow({ tenantId: "a", after: t.cursorAt(0), signal: ac.signal })) {
        seen.push(e.data);
        if (seen.length === 50) ac.abort();
      }
    })();
    for (let i = 1; i <= 150; i++) await t.publish({ data: i, tenantId: i % 3 === 0 ? "a" : "b" });
    await done;
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * 3));
  });
});

describe("head and cursors", () => {
  it("head - cursorAt(0) before anything is published, then the last sequence", async () => {
    const t = fx.sync().topic({ id: "heads" });
    const h0 = await t.head();
    expect(t.cursorSequence(h0)).toBe(0);
    expect(h0).toBe(t.cursorAt(0));
    const r = await t.publish({ data: 1, tenantId: "x" });
    expect(await t.head()).toBe(r.cursor);
  });

  it("latestCursor - newest of the tenant or topic; undefined when there is none", async () => {
    const { t, receipts } = await seed(5, ["a", "b"]);
    expect(await t.latestCursor({ tenantId: "a" })).toBe(receipts[3]!.cursor); // 4 -> "a"
    expect(await t.latestCursor({ tenantId: "b" })).toBe(receipts[4]!.cursor);
    expect(await t.latestCursor()).toBe(receipts[4]!.cursor);
    expect(await t.latestCursor({ tenantId: "c" })).toBeUndefined();
  });

  it("cursorAt / cursorSequence - translate both ways, synchronously", async () => {
    const t = fx.sync().topic({ id: "cursors" });
    const c = t.cursorAt(42);
    expect(t.cursorSequence(c)).toBe(42);
    expect(() => t.cursorAt(-1)).toThrow(InvalidArgumentError);
    expect(() => t.cursorAt(1.5)).toThrow(InvalidArgumentError);
    expect(() => t.cursorSequence("bogus")).toThrow(InvalidCursorError);
    // A cursor made before first use resumes in any incarnation.
    const { receipts } = { receipts: [await t.publish({ data: 1 }), await t.publish({ data: 2 })] };
    expect((await collect(t.replay({ after: c.replace(/\.[0-9a-z]+$/, ".1") }))).length).toBe(1);
    void receipts;
  });

  it("watermark - head() before latestCursor({ tenantId }) leaves no tenant event between them", async () => {
    const t = fx.sync().topic<number>({ id: "watermark" });
    for (let i = 1; i <= 5; i++) await t.publish({ data: i, tenantId: i === 2 ? "idle" : "busy" });
    const head = await t.head(); // before latestCursor()
    const latest = await t.latestCursor({ tenantId: "idle" });
    const saved = latest && t.cursorSequence(latest) > t.cursorSequence(head) ? latest : head;
    expect(saved).toBe(head);
    // Later events of the idle tenant are all after the saved watermark, none is skipped.
    await t.publish({ data: 6, tenantId: "idle" });
    const resumed = await collect(t.replay({ tenantId: "idle", after: saved }));
    expect(resumed.map((e) => e.data)).toEqual([6]);
  });
});
