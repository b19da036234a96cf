import { describe, it, expect } from "vitest";
import { CursorMismatchError, InvalidArgumentError, InvalidCursorError } from "../../src/index.js";
import { Kvm } from "@nats-io/kv";
import { checkpointBucket, checkpointKey } from "../../src/internal.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

/** Stores `cursor` under a checkpoint's key as an earlier release (which saved any cursor) could. */
async function storeRaw(namespace: string, topicId: string, name: string, tenantId: string | undefined, cursor: string): Promise<void> {
  const kv = await new Kvm(fx.nc).open(checkpointBucket(namespace));
  await kv.put(checkpointKey(topicId, name, tenantId), cursor);
}

function expectPastHead(err: Error & { code?: string }): void {
  expect(err).toBeInstanceOf(InvalidCursorError);
  expect(err.code).toBe("INVALID_CURSOR");
  expect(err.message).toMatch(/past the head/);
}

describe("checkpoint", () => {
  it("checkpoint - load is undefined until saved; save keeps the later cursor, never an earlier one", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "cp.basic" });
    const cp = t.checkpoint("indexer");
    expect(await cp.load()).toBeUndefined();
    const r1 = await t.publish({ data: 1 });
    const r2 = await t.publish({ data: 2 });
    expect(await cp.save(r2.cursor)).toBe(r2.cursor);
    expect(await cp.load()).toBe(r2.cursor);
    // An older cursor does not move it back; save answers with what is saved.
    expect(await cp.save(r1.cursor)).toBe(r2.cursor);
    expect(await cp.load()).toBe(r2.cursor);
    // Names and tenants are separate keys; a tenant id that is not a valid KV key still works.
    expect(await t.checkpoint("other").load()).toBeUndefined();
    expect(await t.checkpoint("indexer", { tenantId: "a b/é.~" }).load()).toBeUndefined();
    // The bucket is one per namespace, visible to an operator.
    const buckets: string[] = [];
    for await (const s of fx.jsm.streams.list()) buckets.push(s.config.name);
    expect(buckets).toContain(`KV_TMCP_${s.namespace}`);
  });

  it("checkpoint - two Syncs saving the same checkpoint at once never move it backwards", async () => {
    const a = fx.sync();
    const b = fx.sync({ namespace: a.namespace });
    const ta = a.topic<number>({ id: "cp.race" });
    const tb = b.topic<number>({ id: "cp.race" });
    const cursors: string[] = [];
    for (let i = 0; i < 60; i++) cursors.push((await ta.publish({ data: i })).cursor);
    const cpa = ta.checkpoint("shared");
    const cpb = tb.checkpoint("shared");
    // Each round the two Syncs save neighbouring cursors at the same moment, the lower one from
    // alternating sides: whichever write lands last, the higher cursor must stay.
    for (let i = 0; i + 1 < cursors.length; i += 2) {
      const [low, high] = [cursors[i]!, cursors[i + 1]!];
      const [ra, rb] = await Promise.all(i % 4 === 0 ? [cpa.save(low), cpb.save(high)] : [cpa.save(high), cpb.save(low)]);
      // Each save answers with what is saved, at least the cursor it was given.
      expect([ra, rb]).toContain(high);
      expect(await cpa.load()).toBe(high);
      expect(await cpb.load()).toBe(high);
    }
  });

  it("checkpoint - a tenant's save moves to the head when the tenant has no later event (watermark)", async () => {
    const t = fx.sync().topic<number>({ id: "cp.tenant" });
    const mine = await t.publish({ data: 0, tenantId: "a" });
    for (let i = 0; i < 5; i++) await t.publish({ data: i, tenantId: "b" });
    const cp = t.checkpoint("view", { tenantId: "a" });
    const head = await t.head();
    expect(await cp.save(mine.cursor)).toBe(head);
    expect(await cp.load()).toBe(head);
    // A tenant with an event after the cursor keeps the cursor it applied.
    const b1 = await t.publish({ data: 9, tenantId: "b" });
    await t.publish({ data: 10, tenantId: "b" });
    const cpb = t.checkpoint("view", { tenantId: "b" });
    expect(await cpb.save(b1.cursor)).toBe(b1.cursor);
    // An untenanted checkpoint saves what it was given (every event is its own).
    const all = t.checkpoint("all");
    expect(await all.save(mine.cursor)).toBe(mine.cursor);
  });

  it("checkpoint - reconcile refreshes an idle tenant's cursor to the head before retention reaches it", async () => {
    const t = fx.sync().topic<number>({ id: "cp.reconcile" });
    const mine = await t.publish({ data: 0, tenantId: "idle" });
    const cp = t.checkpoint("view", { tenantId: "idle" });
    expect(await cp.reconcile()).toBeUndefined(); // nothing saved: nothing to refresh
    await cp.save(mine.cursor);
    for (let i = 0; i < 5; i++) await t.publish({ data: i, tenantId: "busy" });
    expect(t.cursorSequence((await cp.load())!)).toBe(t.cursorSequence(mine.cursor));
    expect(await cp.reconcile()).toBe(await t.head());
    expect(await cp.load()).toBe(await t.head());
    // A tenant with unapplied events is left where it is.
    const busy = t.checkpoint("view", { tenantId: "busy" });
    const first = (await t.publish({ data: 7, tenantId: "busy" })).cursor;
    await t.publish({ data: 8, tenantId: "busy" });
    await busy.save(first);
    expect(await busy.reconcile()).toBe(first);
  });

  it("checkpoint - does not jump over events retention already removed after the cursor", async () => {
    const t = fx.sync().topic<string>({ id: "cp.gap", retention: { maxBytes: 140 * 1024 }, maxPayloadBytes: 8 * 1024 });
    const mine = await t.publish({ data: "x", tenantId: "a" });
    await t.publish({ data: "y", tenantId: "a" }); // removed below, never applied
    for (let i = 0; i < 40; i++) await t.publish({ data: "z".repeat(6000), tenantId: "b" });
    const info = (await fx.jsm.streams.info((t as unknown as { streamName: string }).streamName)).state;
    expect(info.first_seq).toBeGreaterThan(2);
    expect(await t.checkpoint("view", { tenantId: "a" }).save(mine.cursor)).toBe(mine.cursor);
  });

  it("checkpoint - a cursor of a re-created topic is a CursorMismatchError; a new save replaces it", async () => {
    const t = fx.sync().topic<number>({ id: "cp.recreate" });
    const cp = t.checkpoint("indexer");
    const old = await t.publish({ data: 1 });
    await cp.save(old.cursor);
    await t.destroy();
    const fresh = await t.publish({ data: 2 });
    expect(await failure(cp.load())).toBeInstanceOf(CursorMismatchError);
    expect(await failure(cp.reconcile())).toBeInstanceOf(CursorMismatchError);
    expect(await failure(cp.save(old.cursor))).toBeInstanceOf(CursorMismatchError);
    // The new incarnation's cursor replaces the old one even though its sequence is lower.
    expect(await cp.save(fresh.cursor)).toBe(fresh.cursor);
    expect(await cp.load()).toBe(fresh.cursor);
  });

  it("checkpoint - bad names, tenants and cursors are typed errors", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "cp.bad" });
    expect(() => t.checkpoint("a.b")).toThrow(InvalidArgumentError);
    expect(() => t.checkpoint("")).toThrow(InvalidArgumentError);
    expect(() => t.checkpoint("ok", { tenantId: "" })).toThrow(InvalidArgumentError);
    const cp = t.checkpoint("ok");
    expect(await failure(cp.save("nope"))).toBeInstanceOf(InvalidCursorError);
    const other = s.topic<number>({ id: "cp.other" });
    expect(await failure(cp.save((await other.publish({ data: 1 })).cursor))).toBeInstanceOf(CursorMismatchError);
    expect(await cp.load()).toBeUndefined();
  });

  it("checkpoint - save refuses a cursor past the head and stores nothing", async () => {
    const t = fx.sync().topic<number>({ id: "cp.pasthead" });
    const r1 = await t.publish({ data: 1, tenantId: "a" });
    await t.publish({ data: 2, tenantId: "b" });
    const cp = t.checkpoint("indexer");
    expectPastHead(await failure(cp.save(t.cursorAt(Number.MAX_SAFE_INTEGER))));
    expect(await cp.load()).toBeUndefined();
    expect(await cp.save(r1.cursor)).toBe(r1.cursor);
    // One sequence past the head is refused as well; the saved cursor stays.
    expectPastHead(await failure(cp.save(t.cursorAt(3))));
    expect(await cp.load()).toBe(r1.cursor);
    const tenant = t.checkpoint("indexer", { tenantId: "a" });
    expectPastHead(await failure(tenant.save(t.cursorAt(Number.MAX_SAFE_INTEGER))));
    expect(await tenant.load()).toBeUndefined();
  });

  it("checkpoint - a poisoned checkpoint (stored past the head) fails load(); reconcile() moves it to the head", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "cp.poisoned" });
    await t.publish({ data: 1, tenantId: "a" });
    await t.publish({ data: 2, tenantId: "b" });
    const cp = t.checkpoint("view", { tenantId: "a" });
    await cp.load(); // creates the bucket
    await storeRaw(s.namespace, t.id, "view", "a", t.cursorAt(Number.MAX_SAFE_INTEGER));
    const err = await failure(cp.load());
    expectPastHead(err);
    expect(err.message).toMatch(/reconcile\(\)/);
    const head = await t.head();
    expect(await cp.reconcile()).toBe(head);
    expect(await cp.load()).toBe(head);
    // Repaired: the checkpoint moves on again and a replay from it sees what follows.
    const next = await t.publish({ data: 3, tenantId: "a" });
    expect((await collect(t.replay({ after: (await cp.load())!, tenantId: "a" }))).map((e) => e.data)).toEqual([3]);
    expect(await cp.save(next.cursor)).toBe(next.cursor);
    expect(await cp.load()).toBe(next.cursor);
  });

  it("checkpoint - save() replaces a poisoned checkpoint with the caller's cursor, lower or not", async () => {
    const s = fx.sync();
    const t = s.topic<number>({ id: "cp.poisoned.save" });
    const r1 = await t.publish({ data: 1 });
    await t.publish({ data: 2 });
    const cp = t.checkpoint("indexer");
    await cp.load();
    await storeRaw(s.namespace, t.id, "indexer", undefined, t.cursorAt(Number.MAX_SAFE_INTEGER));
    // Never backwards applies to cursors the topic issued; the poisoned one is not one of them.
    expect(await cp.save(r1.cursor)).toBe(r1.cursor);
    expect(await cp.load()).toBe(r1.cursor);
  });

  it("checkpoint - a cursor saved by another process between a head read and the KV read is never taken for one past the head", async () => {
    const a = fx.sync();
    const b = fx.sync({ namespace: a.namespace });
    const ta = a.topic<number>({ id: "cp.fresh" });
    const tb = b.topic<number>({ id: "cp.fresh" });
    const writer = ta.checkpoint("indexer");
    const reader = tb.checkpoint("indexer");
    await writer.save((await ta.publish({ data: 0 })).cursor);
    // The real topic, with the other process's publish and save put right after b's next head
    // read: the race, every time instead of by chance.
    const head = tb.head.bind(tb);
    let saved: string | undefined;
    const raceNextHeadRead = () => {
      tb.head = async () => {
        const read = await head();
        tb.head = head;
        saved = await writer.save((await ta.publish({ data: 1 })).cursor);
        return read;
      };
    };
    raceNextHeadRead();
    const loaded = await reader.load();
    expect(tb.cursorSequence(loaded!)).toBeLessThanOrEqual(tb.cursorSequence(saved!));
    raceNextHeadRead();
    const reconciled = await reader.reconcile();
    // Never backwards: the cursor saved meanwhile stays.
    expect(reconciled).toBe(saved);
    expect(await reader.load()).toBe(saved);
  });
});
