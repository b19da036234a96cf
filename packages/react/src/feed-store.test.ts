import { describe, expect, it } from "vitest";
import { ClientSource } from "./client-source.js";
import { EMPTY_FEED } from "./feed-store.js";
import { FakeClient, event, tick } from "../test/fake-client.js";

const owned = (fake: FakeClient) => new ClientSource(() => fake, true);

describe("feed store", () => {
  it("feed store - StrictMode's subscribe, unsubscribe, subscribe opens one feed and keeps it", async () => {
    const fake = new FakeClient();
    const store = owned(fake).feed("hub", "notifications", "acme");
    const off1 = store.subscribe(() => undefined);
    off1();
    const off2 = store.subscribe(() => undefined);
    await tick();
    expect(fake.feeds.length).toBe(1);
    expect(fake.openFeeds.length).toBe(1);
    off2();
    await tick();
    expect(fake.openFeeds.length).toBe(0);
    expect(fake.closed).toBe(1);
  });

  it("feed store - components showing one feed share one subscription and one snapshot", async () => {
    const fake = new FakeClient();
    const source = owned(fake);
    const a = source.feed("hub", "notifications", "acme");
    const b = source.feed("hub", "notifications", "acme");
    expect(a).toBe(b);
    const offA = a.subscribe(() => undefined);
    const offB = b.subscribe(() => undefined);
    expect(fake.feeds.length).toBe(1);
    offA();
    await tick();
    expect(fake.openFeeds.length).toBe(1);
    offB();
    await tick();
    expect(fake.openFeeds.length).toBe(0);
  });

  it("feed store - loading until history, then history and new items with the connection status", () => {
    const fake = new FakeClient();
    const store = owned(fake).feed<{ text: string }>("hub", "notifications", "acme");
    expect(store.getSnapshot()).toBe(EMPTY_FEED);
    let renders = 0;
    store.subscribe(() => renders++);
    expect(store.getSnapshot().status).toBe("loading");
    const feed = fake.feeds[0]!;
    feed.push([event(1, "a"), event(2, "b")], true);
    const first = store.getSnapshot();
    expect(first.items.map((i) => i.n)).toEqual([1, 2]);
    expect(first.status).toBe("connecting");
    expect(store.getSnapshot()).toBe(first); // stable until something changes
    fake.setState({ status: "live" });
    feed.push([event(3, "c")], false);
    const later = store.getSnapshot();
    expect(later.status).toBe("live");
    expect(later.items.map((i) => i.n)).toEqual([1, 2, 3]);
    expect(first.items.length).toBe(2); // earlier snapshots never change
    fake.setState({ tabs: 2 }); // nothing a feed shows
    expect(store.getSnapshot()).toBe(later);
    expect(renders).toBe(3);
  });

  it("feed store - items the client replaces (another user signed in) replace the snapshot's, never mixed", () => {
    const fake = new FakeClient();
    const store = owned(fake).feed("hub", "notifications", "acme");
    store.subscribe(() => undefined);
    fake.feeds[0]!.push([event(1, "a"), event(2, "b")], true);
    fake.feeds[0]!.replace([event(7, "x")]);
    expect(store.getSnapshot().items.map((i) => i.n)).toEqual([7]);
  });

  it("feed store - a refusal gives status error and the error with its code", () => {
    const fake = new FakeClient();
    const store = owned(fake).feed("hub", "notifications", "initech");
    store.subscribe(() => undefined);
    const error = Object.assign(new Error("no"), { code: "FORBIDDEN" }) as never;
    fake.feeds[0]!.fail(error);
    expect(store.getSnapshot().status).toBe("error");
    expect(store.getSnapshot().error).toBe(error);
  });

  it("feed store - another tenant is another feed that starts empty; the client stays open across the switch", async () => {
    const fake = new FakeClient();
    const source = owned(fake);
    source.acquire(); // the provider's hold
    const acme = source.feed("hub", "notifications", "acme");
    const off = acme.subscribe(() => undefined);
    fake.feeds[0]!.push([event(1, "a")], true);
    const globex = source.feed("hub", "notifications", "globex");
    expect(globex.getSnapshot()).toBe(EMPTY_FEED);
    off();
    globex.subscribe(() => undefined);
    await tick();
    expect(fake.openFeeds.map((f) => f.spec.tenantId)).toEqual(["globex"]);
    expect(acme.getSnapshot()).toBe(EMPTY_FEED);
    expect(fake.closed).toBe(0);
  });

  it("feed store - a live feed uses client.live and a client the app gave is never closed", async () => {
    const fake = new FakeClient();
    const store = ClientSource.given(fake).feed("live", "notifications", undefined);
    const off = store.subscribe(() => undefined);
    expect(fake.feeds[0]!.mode).toBe("live");
    expect(fake.feeds[0]!.spec).toEqual({ topic: "notifications" });
    off();
    await tick();
    expect(fake.openFeeds.length).toBe(0);
    expect(fake.closed).toBe(0);
  });

  it("connection store - one onState for many subscribers, each told of a change", async () => {
    const fake = new FakeClient();
    const { connection } = owned(fake);
    let a = 0;
    let b = 0;
    const offA = connection.subscribe(() => a++);
    const offB = connection.subscribe(() => b++);
    expect(fake.stateListeners.size).toBe(1);
    fake.setState({ status: "live", tabs: 2 });
    expect(connection.getSnapshot()).toEqual({ status: "live", tabs: 2 });
    expect([a, b].every((n) => n >= 1)).toBe(true);
    offA();
    offB();
    await tick();
    expect(fake.stateListeners.size).toBe(0);
    expect(fake.closed).toBe(1);
  });

  it("feed store - unread follows the feed's read state; markRead is stable and reaches the open feed; initial is passed on", async () => {
    const fake = new FakeClient();
    const store = owned(fake).feed<{ text: string }>("hub", "notifications", "acme", { last: 50 });
    let renders = 0;
    store.subscribe(() => renders++);
    const feed = fake.feeds[0]!;
    expect(feed.spec.initial).toEqual({ last: 50 });
    feed.push([event(1, "a"), event(2, "b")], true);
    const before = store.getSnapshot();
    expect(before.unread).toBe(2);
    await before.markRead();
    const after = store.getSnapshot();
    expect(after.unread).toBe(0);
    expect(after.markRead).toBe(before.markRead);
    expect(after.isRead(after.items[0]!)).toBe(true);
    expect(renders).toBeGreaterThanOrEqual(2);
    expect(EMPTY_FEED.unread).toBe(0);
  });
});
