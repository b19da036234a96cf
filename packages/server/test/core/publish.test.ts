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

  it("publish - non-JSON data is refused with InvalidArgumentError and nothing is stored", async () => {
    const t = fx.sync().topic({ id: "json" });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const data of [10n, () => 1, Symbol("s"), undefined, NaN, Infinity, { n: 1n }, circular]) {
      const err = await failure(t.publish({ data }));
      expect(err, String(typeof data)).toBeInstanceOf(InvalidArgumentError);
      expect(err.code).toBe("INVALID_ARGUMENT");
    }
    expect(await t.latestCursor()).toBeUndefined();
    expect(t.cursorSequence(await t.head())).toBe(0);
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
});
