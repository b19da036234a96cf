/**
 * Protocol 1.4 on a real bridge and nats-server: a first page of history (`subscribe.initial`),
 * read state with `subscribed` and on every change (`read_state`), `mark_read` answered like the
 * other requests, its bounds, and another principal's read state never readable or writable.
 */
import { describe, it, expect } from "vitest";
import { PROTOCOL_REVISION } from "@tidemark/shared";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("ada", { id: "ada", tenants: ["a", "shared"] });
fx.tokens.set("ada-2", { id: "ada", tenants: ["a", "shared"] });
fx.tokens.set("bob", { id: "bob", tenants: ["b", "shared"] });

describe("bridge inbox", () => {
  it("bridge inbox - initial {last} sends the tenant's last N retained events, then live, no duplicate at the seam", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "inbox.page" });
    for (let i = 0; i < 8; i++) {
      await topic.publish({ data: i, tenantId: "a" });
      await topic.publish({ data: 100 + i, tenantId: "b" });
    }
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const ada = await run.connect("ada");
    expect(ada.log.find((f) => f.type === "welcome")!.revision).toBe(PROTOCOL_REVISION);
    ada.send({ type: "subscribe", id: "f", topic: "inbox.page", tenantId: "a", mode: "hub", initial: { last: 3 } });
    const sub = await ada.next((f) => f.type === "subscribed");
    await ada.next((f) => f.type === "caught_up");
    await topic.publish({ data: 8, tenantId: "a" });
    const events = await ada.events(String(sub.hub), 4);
    expect(events.map((f) => (f.event as { data: number }).data)).toEqual([5, 6, 7, 8]);
    // Past the documented bound: refused before anything is read (the client checks it too).
    ada.send({ type: "subscribe", id: "g", topic: "inbox.page", tenantId: "shared", mode: "hub", initial: { last: 501 } });
    expect((await ada.closed).code).toBe(4400);
  });

  it("bridge inbox - initial {since} on a tenant the principal may not see is refused like any subscribe", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "inbox.since" });
    await topic.publish({ data: 1, tenantId: "b" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const ada = await run.connect("ada");
    ada.send({ type: "subscribe", id: "f", topic: "inbox.since", tenantId: "b", mode: "hub", initial: { since: 0 } });
    const err = await ada.next((f) => f.type === "error");
    expect(err).toMatchObject({ id: "f", code: "FORBIDDEN" });
    expect(ada.log.some((f) => f.type === "event")).toBe(false);
  });

  it("bridge inbox - read state comes with subscribed and follows every change by another connection or the server API", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "inbox.read" });
    const r = [];
    for (let i = 0; i < 5; i++) r.push(await topic.publish({ data: i, tenantId: "a" }));
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const one = await run.connect("ada");
    const two = await run.connect("ada-2");
    for (const c of [one, two]) {
      c.send({ type: "subscribe", id: "f", topic: "inbox.read", tenantId: "a", mode: "hub", read: true });
      expect((await c.next((f) => f.type === "read_state")).read).toEqual({ items: [], version: 0 });
    }
    one.send({ type: "mark_read", id: "f", ref: "1", cursor: r[2]!.cursor });
    expect(await one.next((f) => f.type === "read_state" && f.ref === "1")).toMatchObject({ id: "f", read: { cursor: r[2]!.cursor, items: [], version: 1 } });
    // (A connection may get a version twice: the answer to its own write, and the watch's.)
    const v = (n: number) => (f: { type: string; read?: unknown }) => f.type === "read_state" && (f.read as { version: number }).version === n;
    expect((await two.next(v(1))).read).toEqual({ cursor: r[2]!.cursor, items: [], version: 1 });
    // An item above the cursor, then a server-side write: both reach both connections.
    two.send({ type: "mark_read", id: "f", ref: "x", item: r[4]!.cursor });
    expect((await two.next((f) => f.type === "read_state" && f.ref === "x")).read).toMatchObject({ items: [r[4]!.eventId], version: 2 });
    expect((await one.next(v(2))).read).toMatchObject({ items: [r[4]!.eventId], version: 2 });
    await topic.readState({ principal: "ada", tenantId: "a" }).markRead(r[4]!.cursor);
    for (const c of [one, two]) expect((await c.next(v(3))).read).toEqual({ cursor: r[4]!.cursor, items: [], version: 3 });
    // Backwards is no change: the answer is the stored state.
    one.send({ type: "mark_read", id: "f", ref: "2", cursor: r[0]!.cursor });
    expect((await one.next((f) => f.ref === "2")).read).toMatchObject({ cursor: r[4]!.cursor, version: 3 });
    // Errors answer the ref; the subscription goes on.
    one.send({ type: "mark_read", id: "f", ref: "3", cursor: topic.cursorAt(999) });
    expect(await one.next((f) => f.ref === "3")).toMatchObject({ type: "error", id: "f", code: "INVALID_CURSOR" });
    one.send({ type: "mark_read", id: "nope", ref: "4", cursor: r[0]!.cursor });
    expect(await one.next((f) => f.ref === "4")).toMatchObject({ type: "error", code: "INVALID_ARGUMENT" });
    await topic.publish({ data: 5, tenantId: "a" });
    await one.next((f) => f.type === "event");
  });

  it("bridge inbox - another principal's read state is never readable or writable through a frame", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "inbox.users" });
    const e1 = await topic.publish({ data: 1, tenantId: "shared" });
    const e2 = await topic.publish({ data: 2, tenantId: "shared" });
    const a1 = await topic.publish({ data: 3, tenantId: "a" });
    await topic.readState({ principal: "ada", tenantId: "shared" }).markRead(e2.cursor);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const bob = await run.connect("bob");
    // Bob on the same tenant sees his own (empty) state, not ada's.
    bob.send({ type: "subscribe", id: "f", topic: "inbox.users", tenantId: "shared", mode: "hub", read: true });
    expect((await bob.next((f) => f.type === "read_state")).read).toEqual({ items: [], version: 0 });
    // His writes change his state only.
    bob.send({ type: "mark_read", id: "f", ref: "1", cursor: e1.cursor });
    expect((await bob.next((f) => f.ref === "1")).read).toMatchObject({ cursor: e1.cursor, version: 1 });
    expect(await topic.readState({ principal: "ada", tenantId: "shared" }).get()).toEqual({ cursor: e2.cursor, items: [], version: 1 });
    // A frame has no field to name a principal: extra fields are ignored, the state is still his.
    bob.send({ type: "mark_read", id: "f", ref: "2", cursor: e2.cursor, principal: "ada" });
    await bob.next((f) => f.ref === "2");
    expect((await topic.readState({ principal: "ada", tenantId: "shared" }).get()).version).toBe(1);
    // A tenant he may not subscribe to has no subscription to write through; ada's item is not his.
    bob.send({ type: "subscribe", id: "g", topic: "inbox.users", tenantId: "a", mode: "hub", read: true });
    expect(await bob.next((f) => f.type === "error" && f.id === "g")).toMatchObject({ code: "FORBIDDEN" });
    bob.send({ type: "mark_read", id: "g", ref: "3", cursor: a1.cursor });
    expect(await bob.next((f) => f.ref === "3")).toMatchObject({ type: "error", code: "INVALID_ARGUMENT" });
    bob.send({ type: "mark_read", id: "f", ref: "4", item: a1.cursor });
    expect(await bob.next((f) => f.ref === "4")).toMatchObject({ type: "error", code: "INVALID_ARGUMENT" });
    expect(await topic.readState({ principal: "ada", tenantId: "a" }).get()).toEqual({ cursor: undefined, items: [], version: 0 });
    // Ada's later change is never sent to bob.
    const told = bob.log.filter((f) => f.type === "read_state").length;
    await topic.readState({ principal: "ada", tenantId: "shared" }).markItemRead(e2.cursor);
    const ada = await run.connect("ada");
    ada.send({ type: "subscribe", id: "f", topic: "inbox.users", tenantId: "shared", mode: "hub", read: true });
    await ada.next((f) => f.type === "read_state");
    await topic.readState({ principal: "ada", tenantId: "a" }).markRead(a1.cursor);
    await new Promise((r) => setTimeout(r, 200));
    expect(bob.log.filter((f) => f.type === "read_state")).toHaveLength(told);
    for (const f of bob.log.filter((f) => f.type === "read_state")) expect((f.read as { items: string[] }).items).toEqual([]);
  });

  it("bridge inbox - mark_read is rate-limited per connection (LIMIT_EXCEEDED mark_read_rate, retryAfterMs), the connection stays", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "inbox.limits" });
    const items = [];
    for (let i = 0; i < 4; i++) items.push(await topic.publish({ data: i, tenantId: "a" }));
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { markReadRatePerSecond: 2 } }, sync);
    const ada = await run.connect("ada");
    ada.send({ type: "subscribe", id: "f", topic: "inbox.limits", tenantId: "a", mode: "hub", read: true });
    await ada.next((f) => f.type === "read_state");
    for (let i = 0; i < 6; i++) ada.send({ type: "mark_read", id: "f", ref: `r${i}`, cursor: items[0]!.cursor });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await ada.next((f) => f.ref === `r${i}`));
    expect(answers.filter((f) => f.type === "read_state")).toHaveLength(4); // a burst of twice the rate
    expect(answers.filter((f) => f.type === "error")[0]).toMatchObject({ code: "LIMIT_EXCEEDED", limit: "mark_read_rate" });
    expect(Number(answers.find((f) => f.type === "error")!.retryAfterMs)).toBeGreaterThan(0);
    expect(ada.ws.readyState).toBe(ada.ws.OPEN);
  });
});
