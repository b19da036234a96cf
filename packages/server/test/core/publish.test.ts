import { describe, it, expect } from "vitest";
import { InvalidArgumentError, PayloadTooLargeError } from "../../src/index.js";
import { collect, failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("publish", () => {
  it("publish - receipt names the event, its cursor and sequence", async () => {
    const t = fx.sync().topic<{ itemId: string }>({ id: "inventory.events" });
    const r = await t.publish({ data: { itemId: "a" } });
    expect(r.streamSequence).toBe(1);
    expect(r.duplicate).toBe(false);
    expect(r.cursor.startsWith("s6t.")).toBe(true);
    expect(t.cursorSequence(r.cursor)).toBe(1);
    const [e] = await collect(t.replay());
    expect(e).toMatchObject({ eventId: r.eventId, cursor: r.cursor, streamSequence: 1, data: { itemId: "a" } });
    expect(e!.tenantId).toBeUndefined();
    expect(Math.abs(e!.publishedAt - Date.now())).toBeLessThan(60_000);
  });

  it("publish - a repeated idempotency key stores nothing and returns the original receipt", async () => {
    const t = fx.sync().topic({ id: "orders" });
    const first = await t.publish({ data: 1, idempotencyKey: "item:1:v1" });
    await t.publish({ data: 2 });
    const again = await t.publish({ data: "other payload", idempotencyKey: "item:1:v1" });
    expect(again).toEqual({ ...first, duplicate: true });
    expect((await collect(t.replay())).map((e) => e.data)).toEqual([1, 2]);
  });

  it("publish - a duplicate whose original is no longer retained still returns the original sequence", async () => {
    const s = fx.sync();
    const t = s.topic({ id: "purged" });
    const first = await t.publish({ data: 1, idempotencyKey: "k" });
    await fx.jsm.streams.purge(`TMEV_${s.namespace}_purged`);
    const again = await t.publish({ data: 1, idempotencyKey: "k" });
    expect(again).toEqual({ ...first, duplicate: true });
    expect(await collect(t.replay())).toEqual([]);
  });

  it("publish - an envelope over maxPayloadBytes is refused and nothing is stored", async () => {
    const t = fx.sync().topic({ id: "small", maxPayloadBytes: 1024 });
    await t.publish({ data: "x".repeat(900) });
    const err = await failure(t.publish({ data: "x".repeat(1024) }));
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err.code).toBe("PAYLOAD_TOO_LARGE");
    expect(err.name).toBe("PayloadTooLargeError");
    expect(err).toMatchObject({ limit: 1024 });
    // The limit counts the envelope: data just under the limit with the envelope is over it.
    await expect(t.publish({ data: "x".repeat(1000) })).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(await collect(t.replay())).toHaveLength(1);
  });

  it("publish - data that would not read back as passed is refused with InvalidArgumentError naming the path", async () => {
    const t = fx.sync().topic({ id: "json" });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    class Point {
      x = 1;
    }
    const cases: [unknown, RegExp][] = [
      [10n, /^data is a bigint/],
      [() => 1, /^data is a function/],
      [Symbol("s"), /^data is a symbol/],
      [undefined, /^data is undefined/],
      [NaN, /^data is a non-finite number/],
      [Infinity, /^data is a non-finite number/],
      [{ n: 1n }, /^data\.n is a bigint/],
      [{ d: undefined, ok: [undefined] }, /^data\.ok\[0\] is undefined/], // not "data is undefined"
      [[1, undefined], /^data\[1\] is undefined/],
      // eslint-disable-next-line no-sparse-arrays -- a hole is what is tested
      [[1, , 3], /^data\[1\] is a hole/],
      [{ m: new Map([["a", 1]]) }, /^data\.m is a Map/],
      [{ s: new Set([1]) }, /^data\.s is a Set/],
      [{ at: new Date(0) }, /^data\.at is a Date/],
      [{ p: new Point() }, /^data\.p is a Point/],
      [{ list: [{ "odd key": [Symbol("x")] }] }, /^data\.list\[0\]\["odd key"\]\[0\] is a symbol/],
      [{ [Symbol("k")]: 1 }, /^data has a symbol key/],
      [circular, /^data\.self is a cycle/],
    ];
    for (const [data, message] of cases) {
      const err = await failure(t.publish({ data }));
      expect(err, String(message)).toBeInstanceOf(InvalidArgumentError);
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(err.message, String(message)).toMatch(message);
    }
    expect(await t.latestCursor()).toBeUndefined();
    expect(t.cursorSequence(await t.head())).toBe(0);
  });

  it("publish - JSON values read back as passed; an undefined member is the one documented change (omitted)", async () => {
    const t = fx.sync().topic({ id: "json.ok" });
    const values: unknown[] = [null, 0, -1.5, "", "ünï", true, [], {}, [null, [1, { a: "b" }]], Object.assign(Object.create(null), { x: 1 })];
    for (const data of values) await t.publish({ data });
    await t.publish({ data: { keep: 1, gone: undefined, nested: { gone: undefined } } });
    const back = (await collect(t.replay())).map((e) => e.data);
    expect(back.slice(0, values.length)).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))));
    expect(back[values.length]).toStrictEqual({ keep: 1, nested: {} });
  });

  it("publish - tenant ids: any non-empty string up to 256 bytes round-trips; others are refused", async () => {
    const t = fx.sync().topic<string>({ id: "tenants" });
    const ids = ["plain-1", "with.dots", "spaces and * > wildcards", "ünïcödé/📦", "~tilde", "_", "x".repeat(256)];
    for (const tenantId of ids) await t.publish({ data: tenantId, tenantId });
    for (const tenantId of ids) {
      const events = await collect(t.replay({ tenantId }));
      expect(events.map((e) => [e.tenantId, e.data])).toEqual([[tenantId, tenantId]]);
    }
    for (const tenantId of ["", "x".repeat(257), "é".repeat(129), "\uD800"]) {
      const err = await failure(t.publish({ data: "no", tenantId }));
      expect(err).toBeInstanceOf(InvalidArgumentError);
    }
    expect(t.cursorSequence(await t.head())).toBe(ids.length);
  });

  it("publish - idempotency keys must be header-safe", async () => {
    const t = fx.sync().topic({ id: "keys" });
    await expect(t.publish({ data: 1, idempotencyKey: "a\r\nb" })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(t.publish({ data: 1, idempotencyKey: "" })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await t.latestCursor()).toBeUndefined();
  });

  it("publish - idempotency keys are scoped to the tenant: the same key in two tenants stores two events", async () => {
    const t = fx.sync().topic<string>({ id: "keys.tenants" });
    const a = await t.publish({ data: "a", tenantId: "acme", idempotencyKey: "order-1" });
    const b = await t.publish({ data: "b", tenantId: "globex", idempotencyKey: "order-1" });
    const none = await t.publish({ data: "none", idempotencyKey: "order-1" });
    // Tenant ids that could be confused with the key separator stay apart too.
    const odd = await t.publish({ data: "odd", tenantId: "acme:order-1", idempotencyKey: "x" });
    const odd2 = await t.publish({ data: "odd2", tenantId: "acme", idempotencyKey: "order-1:x" });
    for (const r of [a, b, none, odd, odd2]) expect(r.duplicate).toBe(false);
    expect(new Set([a, b, none, odd, odd2].map((r) => r.streamSequence)).size).toBe(5);
    // A repeat in the same tenant is a duplicate with the original receipt.
    expect(await t.publish({ data: "again", tenantId: "globex", idempotencyKey: "order-1" })).toEqual({ ...b, duplicate: true });
    expect(await t.publish({ data: "again", idempotencyKey: "order-1" })).toEqual({ ...none, duplicate: true });
    // The longest key with the longest tenant id fits the message-id header.
    const long = await t.publish({ data: "long", tenantId: "é".repeat(128), idempotencyKey: "ü".repeat(512) });
    expect(long.duplicate).toBe(false);
    expect(await t.publish({ data: "long", tenantId: "é".repeat(128), idempotencyKey: "ü".repeat(512) })).toEqual({ ...long, duplicate: true });
    expect((await collect(t.replay())).map((e) => e.data)).toEqual(["a", "b", "none", "odd", "odd2", "long"]);
  });
});
