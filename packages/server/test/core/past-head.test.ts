/**
 * A cursor of this topic whose sequence is past the head was never issued by the topic (issue 24,
 * item 4): every read path refuses it with InvalidCursorError ("past the head"), never an empty
 * read. A cursor at the head is still valid (nothing after it yet).
 */
import { describe, it, expect } from "vitest";
import { InvalidCursorError } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

/** The largest sequence a cursor can carry: one such minted cursor used to pin a checkpoint. */
const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

async function seeded(id: string) {
  const sync = fx.sync();
  const t = sync.topic<number>({ id });
  const receipts = [];
  for (let i = 1; i <= 4; i++) receipts.push(await t.publish({ data: i, tenantId: i % 2 ? "a" : "b" }));
  return { sync, t, receipts };
}

function expectPastHead(err: Error & { code?: string }): void {
  expect(err).toBeInstanceOf(InvalidCursorError);
  expect(err.code).toBe("INVALID_CURSOR");
  expect(err.message).toMatch(/past the head/);
}

describe("a cursor past the head", () => {
  it("past head - replay refuses it, with or without a tenant, also with an until at or before it", async () => {
    const { t, receipts } = await seeded("ph.replay");
    for (const after of [t.cursorAt(MAX_SEQUENCE), t.cursorAt(5)]) {
      expectPastHead(await failure(t.replay({ after })));
      expectPastHead(await failure(t.replay({ after, tenantId: "a" })));
      // An empty range is still refused: the cursor is checked against the head read at start.
      expectPastHead(await failure(t.replay({ after, until: receipts[1]!.cursor })));
      expectPastHead(await failure(t.replay({ after, until: after, tenantId: "b" })));
    }
    // The head itself is a position the topic issued: nothing after it, no error.
    expect(await collect(t.replay({ after: await t.head() }))).toEqual([]);
    // Once the topic reaches the sequence, the cursor names a real position.
    await t.publish({ data: 5, tenantId: "a" });
    expect(await collect(t.replay({ after: t.cursorAt(5) }))).toEqual([]);
    expect((await collect(t.replay({ after: t.cursorAt(4) }))).map((e) => e.data)).toEqual([5]);
  });

  it("past head - an until past the head is a bound, not a position: the replay ends at the head", async () => {
    const { t, receipts } = await seeded("ph.until");
    const got = await collect(t.replay({ after: receipts[1]!.cursor, until: t.cursorAt(MAX_SEQUENCE) }));
    expect(got.map((e) => e.data)).toEqual([3, 4]);
  });

  it("past head - follow refuses it from iteration instead of waiting forever", async () => {
    const { t } = await seeded("ph.follow");
    const ac = new AbortController();
    // A bound for a wrong implementation only: an aborted follow ends without an error.
    const bound = setTimeout(() => ac.abort(), 15_000);
    const follow = t.follow({ after: t.cursorAt(MAX_SEQUENCE), tenantId: "a", signal: ac.signal });
    const err = await failure(follow).finally(() => clearTimeout(bound));
    expectPastHead(err);
  });

  it("past head - hub().subscribe refuses it with the same error", async () => {
    const { t } = await seeded("ph.hub");
    const ac = new AbortController();
    const bound = setTimeout(() => ac.abort(), 15_000);
    const err = await failure(t.hub({ tenantId: "a" }).subscribe({ after: t.cursorAt(MAX_SEQUENCE), signal: ac.signal })).finally(() => clearTimeout(bound));
    expectPastHead(err);
  });

  it("past head - a cursor made before first use (any incarnation) is held to the same rule", async () => {
    const { sync, t } = await seeded("ph.early");
    const early = fx.sync({ namespace: sync.namespace }).topic<number>({ id: "ph.early" });
    const minted = early.cursorAt(MAX_SEQUENCE); // before early's first use: no incarnation
    expectPastHead(await failure(early.replay({ after: minted })));
    expectPastHead(await failure(t.replay({ after: minted })));
  });
});
