import { describe, it, expect } from "vitest";
import { createSync, CursorMismatchError, RetentionGapError } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
// The smallest valid window: maxPayloadBytes + 4 KiB. About 25 events of 200 bytes fit.
const tiny = { maxPayloadBytes: 1024, retention: { maxBytes: 5 * 1024, maxAgeMs: 3600_000 } };
const pad = "x".repeat(120);
// Fails the read instead of hanging when no event and no gap come (a follow never ends).
async function nextWithin<T>(it: AsyncIterator<T>, ms: number): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event and no gap within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([it.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("gaps", () => {
  it("gap - an after below the retained window fails before anything is yielded", async () => {
    const t = fx.sync().topic({ id: "gap.replay", ...tiny });
    const first = await t.publish({ data: pad });
    for (let i = 0; i < 200; i++) await t.publish({ data: pad, tenantId: i % 2 ? "a" : "b" });
    const yielded: unknown[] = [];
    let err: unknown;
    try {
      for await (const e of t.replay({ after: first.cursor })) yielded.push(e);
    } catch (e) {
      err = e;
    }
    expect(yielded).toEqual([]);
    expect(err).toBeInstanceOf(RetentionGapError);
    const gap = err as RetentionGapError;
    expect(gap.code).toBe("RETENTION_GAP");
    expect(gap.requestedSequence).toBe(1);
    expect(gap.firstAvailableSequence).toBeGreaterThan(2);
    // A tenant read counts every removal past its cursor: on a shared topic the core cannot
    // tell whose events were removed.
    expect(await failure(t.replay({ after: first.cursor, tenantId: "a" }))).toBeInstanceOf(RetentionGapError);
    // Reading without a cursor is not a gap: it starts at the first retained event.
    const rest = await collect(t.replay());
    expect(rest[0]!.streamSequence).toBe(gap.firstAvailableSequence);
  });

  it("gap - retention overtaking a stalled follow raises mid-stream, never a silent skip", async () => {
    for (const tenantId of [undefined, "a"]) {
      const t = fx.sync().topic({ id: "gap.follow", ...tiny });
      await t.publish({ data: pad, tenantId });
      const ac = new AbortController();
      const it = t.follow({ after: t.cursorAt(0), tenantId, signal: ac.signal })[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.value!.streamSequence).toBe(1);
      // The reader stalls while the window moves far past it: more than the consumer's flow
      // control lets the client hold, so the broker must evict events not yet delivered.
      const big = "x".repeat(900);
      for (let i = 0; i < 6000; i += 200) {
        await Promise.all(
          Array.from({ length: 200 }, (_, j) => t.publish({ data: big, tenantId: (i + j) % 2 ? tenantId : tenantId && "b" })),
        );
      }
      const seqs = [1];
      let err: unknown;
      try {
        for (;;) {
          const r = await nextWithin(it, 5_000);
          if (r.done) break;
          seqs.push(r.value.streamSequence);
        }
      } catch (e) {
        err = e;
      }
      ac.abort();
      expect(err, `tenant ${tenantId}`).toBeInstanceOf(RetentionGapError);
      const gap = err as RetentionGapError;
      expect(gap.requestedSequence).toBe(seqs.at(-1));
      if (tenantId === undefined) {
        // Whole-topic reads see every sequence: what was yielded is contiguous.
        seqs.forEach((s, i) => expect(s).toBe(i + 1));
      }
    }
  });

  it("gap - a cursor from a destroyed and re-created topic is a CursorMismatchError, not a resume", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "gap.recreated" });
    for (let i = 1; i <= 3; i++) await t.publish({ data: i, tenantId: "a" });
    const old = await t.head();
    await t.destroy();
    for (let i = 1; i <= 5; i++) await t.publish({ data: i * 10, tenantId: "a" });
    for (const read of [t.replay({ after: old }), t.follow({ after: old }), t.replay({ after: old, tenantId: "a" })]) {
      const err = await failure(read);
      expect(err).toBeInstanceOf(CursorMismatchError);
      expect(err.code).toBe("CURSOR_MISMATCH");
      expect(err.message).toMatch(/destroyed and re-created/);
    }
    // The same sequence number in the new incarnation resumes normally.
    expect((await collect(t.replay({ after: t.cursorAt(3) }))).map((e) => e.data)).toEqual([40, 50]);
    // And a cursor made before first use (no incarnation) resumes anywhere.
    const fresh = fx.sync({ namespace: s.namespace }).topic({ id: "gap.recreated" });
    expect((await collect(t.replay({ after: fresh.cursorAt(4) }))).map((e) => e.data)).toEqual([50]);
  });

  it("gap - the head of an empty topic that was destroyed and re-created is a CursorMismatchError too, even for an empty range", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "gap.recreated.zero" });
    const empty = await t.head(); // sequence 0 of the first incarnation
    await t.publish({ data: 1, tenantId: "a" }); // never read: lost with the stream
    await t.destroy();
    await t.publish({ data: 10, tenantId: "a" });
    const reads = [t.replay({ after: empty }), t.follow({ after: empty }), t.replay({ after: empty, tenantId: "a" }), t.replay({ after: empty, until: t.cursorAt(0) })];
    for (const read of reads) expect(await failure(read)).toBeInstanceOf(CursorMismatchError);
  });

  it("gap - other tenants' events between a tenant's events are never a gap", async () => {
    const t = fx.sync().topic<number>({ id: "gap.tenants" });
    const mine = [];
    for (let i = 1; i <= 300; i++) {
      const r = await t.publish({ data: i, tenantId: i % 50 === 0 ? "rare" : "busy" });
      if (i % 50 === 0) mine.push(r);
    }
    const got = await collect(t.replay({ tenantId: "rare", after: t.cursorAt(0) }));
    expect(got.map((e) => e.cursor)).toEqual(mine.map((r) => r.cursor));
  });
});

describe("incarnations across processes", () => {
  it("gap - a process that did not destroy the topic notices the re-created stream", async () => {
    const here = fx.sync();
    const there = fx.sync({ namespace: here.namespace });
    const mine = here.topic<number>({ id: "shared.feed" });
    const theirs = there.topic<number>({ id: "shared.feed" });
    for (let i = 1; i <= 3; i++) await mine.publish({ data: i });
    const old = await mine.head();
    // Another application destroys and re-creates the topic.
    await theirs.destroy();
    await theirs.publish({ data: 10 });
    // This process's cursors now name the new incarnation, so an old cursor is refused here too.
    expect(await failure(mine.replay({ after: old }))).toBeInstanceOf(CursorMismatchError);
    const head = await mine.head();
    expect(head).not.toBe(old);
    expect((await collect(mine.replay({ after: mine.cursorAt(0) }))).map((e) => e.cursor)).toEqual([head]);
    // A receipt after the re-creation names the new incarnation as well.
    const fresh = fx.sync({ namespace: here.namespace }).topic<number>({ id: "shared.feed" });
    const r = await fresh.publish({ data: 11 });
    expect((await collect(mine.replay({ after: head }))).map((e) => e.cursor)).toEqual([r.cursor]);
  });

  it("latestCursor - a tenant's latest cursor names the incarnation re-created by another Sync", async () => {
    const here = fx.sync();
    const mine = here.topic<number>({ id: "shared.latest" });
    for (let i = 1; i <= 3; i++) await mine.publish({ data: i, tenantId: "t1" });
    const old = await mine.latestCursor({ tenantId: "t1" });
    // Another application (its own Sync) destroys and re-creates the topic.
    const there = createSync({ namespace: here.namespace, nats: { servers: fx.nats.url } });
    try {
      const theirs = there.topic<number>({ id: "shared.latest" });
      await theirs.destroy();
      const r = await theirs.publish({ data: 10, tenantId: "t1" });
      const latest = await mine.latestCursor({ tenantId: "t1" });
      expect(latest).not.toBe(old);
      expect(latest).toBe(r.cursor);
      expect((await collect(mine.replay({ after: latest!, tenantId: "t1" })))).toEqual([]);
    } finally {
      await there.close();
    }
  });

  it("gap - a publish that lands in a stream re-created elsewhere returns a receipt of the new stream", async () => {
    const here = fx.sync();
    const there = fx.sync({ namespace: here.namespace });
    const mine = here.topic<number>({ id: "shared.pub" });
    const theirs = there.topic<number>({ id: "shared.pub" });
    for (let i = 1; i <= 3; i++) await mine.publish({ data: i });
    await theirs.destroy();
    await theirs.head(); // re-created, empty
    const r = await mine.publish({ data: 4 });
    expect(r.streamSequence).toBe(1);
    const [event] = await collect(theirs.replay());
    expect(event!.cursor).toBe(r.cursor);
    expect(event!.eventId).toBe(r.eventId);
  });
});
