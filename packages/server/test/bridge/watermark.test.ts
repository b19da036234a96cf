import { describe, it, expect } from "vitest";
import { consumersOf, eventually, firstRetained, jsApiRequests, pushWindow } from "../hub/fixture.js";
import type { TestClient } from "./client.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });
// About 18 events of 300 bytes fit in 8 KiB.
const small = { id: "small", maxPayloadBytes: 1024, retention: { maxBytes: 8 * 1024 } };
const caughtUps = (c: TestClient, id: string) => c.log.filter((f) => f.type === "caught_up" && f.id === id).map((f) => String(f.cursor));
const data = (f: Record<string, unknown>) => (f.event as { data: string }).data;

describe("bridge watermarks", () => {
  it("bridge - an idle tenant gets newer caught_up watermarks while others push retention past it; resuming from one is no gap", async () => {
    const sync = fx.sync({ hubs: { windowPollMs: 100 } });
    const topic = sync.topic<string>(small);
    const before = await topic.publish({ data: "a0", tenantId: "a" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "small", tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await pushWindow(topic, "b", 60);
    const first = await firstRetained(sync, "small");
    expect(first).toBeGreaterThan(before.streamSequence + 1);
    await eventually(() => topic.cursorSequence(caughtUps(client, "s").at(-1)!) >= first - 1, 10_000, "a fresh caught_up");
    expect(caughtUps(client, "s").length).toBeGreaterThan(1);
    // The connected subscription gets the tenant's next event, with no reset.
    await topic.publish({ data: "a1", tenantId: "a" });
    expect((await client.events(String(hub), 1)).map(data)).toEqual(["a1"]);
    const saved = String((client.log.find((f) => f.type === "event")!.event as { cursor: string }).cursor);

    // More traffic of others, then a resume from the newest caught_up cursor.
    await pushWindow(topic, "b", 40);
    await eventually(async () => topic.cursorSequence(caughtUps(client, "s").at(-1)!) >= (await firstRetained(sync, "small")) - 1, 10_000, "another caught_up");
    expect(topic.cursorSequence(caughtUps(client, "s").at(-1)!)).toBeGreaterThan(topic.cursorSequence(saved));
    const resumeFrom = caughtUps(client, "s").at(-1)!;
    client.close();
    await topic.publish({ data: "a2", tenantId: "a" });
    const again = await run.connect("alice");
    const sub = await again.subscribe({ id: "s", topic: "small", tenantId: "a", cursor: resumeFrom });
    await again.next((f) => f.type === "caught_up");
    await topic.publish({ data: "a3", tenantId: "a" });
    const events = await again.events(String(sub.hub), 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(again.log.filter((f) => f.type === "event").map(data)).toEqual(["a2", "a3"]);
    expect([...client.log, ...again.log].filter((f) => f.type === "reset")).toEqual([]);
    expect(events).toHaveLength(2);
  });

  it("bridge - 50 idle subscribers of one tenant share one watermark: broker requests and consumers do not grow with them", async () => {
    const pollMs = 200;
    const sync = fx.sync({ hubs: { windowPollMs: pollMs } });
    const topic = sync.topic<string>(small);
    await topic.publish({ data: "a0", tenantId: "a" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxConnectionsPerPrincipal: 100 } }, sync);
    const clients = await Promise.all(Array.from({ length: 50 }, () => run.connect("alice")));
    await Promise.all(clients.map((c) => c.subscribe({ id: "s", topic: "small", tenantId: "a" })));
    await Promise.all(clients.map((c) => c.next((f) => f.type === "caught_up")));
    expect(await consumersOf(fx.nats, sync.namespace)).toBe(1);

    const api = await jsApiRequests(fx.nats);
    const started = Date.now();
    await pushWindow(topic, "b", 60);
    const first = await firstRetained(sync, "small");
    await eventually(() => clients.every((c) => topic.cursorSequence(caughtUps(c, "s").at(-1)!) >= first - 1), 10_000, "fresh watermarks");
    const requests = (await jsApiRequests(fx.nats)) - api;
    const elapsed = Date.now() - started;
    // Every subscriber saw the same watermarks: one refresh per hub, fanned out.
    const marks = caughtUps(clients[0]!, "s");
    for (const c of clients) expect(caughtUps(c, "s")).toEqual(marks);
    const refreshes = marks.length - 1;
    expect(refreshes).toBeGreaterThanOrEqual(2);
    // One window read per poll, one latestCursor() per refresh (a stream info and a
    // last-by-subject lookup), plus the reads above: a request per subscriber would be 50 per
    // refresh.
    expect(requests).toBeLessThanOrEqual(Math.ceil(elapsed / pollMs) + 1 + 2 * refreshes + 4);
    expect(await consumersOf(fx.nats, sync.namespace)).toBe(1);
  });
});
