/**
 * The bridge reads a topic's hub through the hub contract (`BatchHub` of hub/contract.ts): the
 * hub `topic.hub()` returns. A hub that does not keep it is refused with a typed error on the
 * subscription, not served by a second registry of the bridge's own.
 */
import { describe, expect, it } from "vitest";
import type { Hub, Topic } from "../../src/index.js";
import { spyTopic } from "../hub/fixture.js";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });

describe("bridge hub contract", () => {
  it("bridge - a topic's own hub serves its hub subscriptions", async () => {
    const sync = fx.sync();
    const real = sync.topic<number>({ id: "own" });
    let hubs = 0;
    const topic: Topic<number> = spyTopic(real, { hub: (o) => (hubs++, real.hub(o)) });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    const { hub } = await client.subscribe({ id: "s", topic: "own", tenantId: "a" });
    await client.next((f) => f.type === "caught_up");
    await real.publish({ data: 7, tenantId: "a" });
    const [event] = await client.events(String(hub), 1);
    expect((event!.event as { data: number }).data).toBe(7);
    expect(hubs).toBeGreaterThan(0);
  });

  it("bridge - a hub without the hub contract ends the subscription with INVALID_ARGUMENT", async () => {
    const sync = fx.sync();
    const real = sync.topic<number>({ id: "foreign" });
    await real.publish({ data: 1, tenantId: "a" });
    // Only the public Hub interface: no batches, no progress callbacks for caught_up frames.
    const foreign = (tenantId: string | undefined): Hub<number> => ({
      topicId: real.id,
      tenantId,
      subscriberCount: 0,
      subscribe: (o) => real.hub({ tenantId }).subscribe(o),
    });
    const topic: Topic<number> = spyTopic(real, { hub: (o) => foreign(o?.tenantId) });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }] }, sync);
    const client = await run.connect("alice");
    client.send({ type: "subscribe", id: "s", topic: "foreign", tenantId: "a", mode: "hub" });
    const ended = await client.next((f) => f.type === "unsubscribed");
    expect(ended).toMatchObject({ id: "s", code: "INVALID_ARGUMENT" });
    expect(String((ended as { message?: string }).message)).toMatch(/hub contract/);
    expect(client.log.filter((f) => f.type === "event" || f.type === "caught_up")).toEqual([]);
    // Nothing was lost: the topic's events are all there for a reader of the real hub.
    expect(await real.latestCursor({ tenantId: "a" })).toBeDefined();
    expect(run.bridge.connectionCount).toBe(1);
  });
});
