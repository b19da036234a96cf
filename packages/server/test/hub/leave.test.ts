/**
 * A hub subscriber that is cancelled while it reaches the live edge must end, and release its
 * follower (and the follower's consumer), even on a quiet tenant where nothing wakes it again.
 * A reader that stops from its own caught-up callback does exactly that (issue 24, item 8).
 */
import { describe, it, expect } from "vitest";
import { hubRegistryOf, type SharedHub } from "../../src/index.js";
import { DIRECT_READ_MAX } from "../../src/internal.js";
import { useCoreFixture } from "../core/fixture.js";
import { consumersOf, eventually } from "./fixture.js";

/** The namespace's read consumers as the broker has them configured. */
async function readConsumers(jsm: ReturnType<typeof useCoreFixture>["jsm"], namespace: string) {
  const found: { name: string; inactiveMs: number; push: boolean }[] = [];
  for await (const stream of jsm.streams.list()) {
    if (!stream.config.name.includes(`_${namespace}_`)) continue;
    for await (const c of jsm.consumers.list(stream.config.name)) {
      found.push({ name: c.name, inactiveMs: (c.config.inactive_threshold ?? 0) / 1e6, push: c.config.deliver_subject !== undefined });
    }
  }
  return found;
}

const fx = useCoreFixture();

describe("hub - leaving at the live edge", () => {
  for (const hubMode of ["topic", "tenant"] as const) {
    it(`hub - a subscriber aborted from its own caught-up callback ends and retires its follower and consumer on a quiet tenant (hub mode ${hubMode})`, async () => {
      const sync = fx.sync({ hubs: { hubMode } });
      const topic = sync.topic<number>({ id: "quiet" });
      await topic.publish({ data: 1, tenantId: "other" });
      const head = await topic.head();
      const ac = new AbortController();
      let caughtUp = 0;
      const hub = topic.hub({ tenantId: "q" }) as SharedHub<number>;
      const done = (async () => {
        // With a cursor the caught-up mark comes from inside the window loop, at the live edge.
        const progress = { onCaughtUp: () => (caughtUp++, ac.abort()) };
        for await (const event of hub.subscribe({ after: head, signal: ac.signal, progress })) expect(event).toBeUndefined();
      })();
      // Nothing is published to wake it: before, the iteration waited for the tenant's next event.
      const ended = await Promise.race([done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 10_000))]);
      expect(caughtUp).toBe(1);
      expect(ended).toBe(true);
      expect(hub.subscriberCount).toBe(0);
      expect(hubRegistryOf(sync).followerCount).toBe(0);
      await eventually(async () => (await consumersOf(fx.nats, sync.namespace)) === 0 && sync.stats().consumers === 0, 10_000, "no read consumer left");
    });
  }

  it("hub - every read consumer (a feed's follow, a replay) has a server-side inactive threshold of 5 minutes: the backstop when its reader vanished", async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "backstop" });
    for (let i = 0; i < 300; i++) await topic.publish({ data: i, tenantId: "q" });
    const ac = new AbortController();
    const hub = topic.hub({ tenantId: "q" }) as SharedHub<number>;
    let caughtUp = false;
    const live = (async () => {
      for await (const _ of hub.subscribe({ signal: ac.signal, progress: { onCaughtUp: () => (caughtUp = true) } })) void _;
    })();
    await eventually(() => caughtUp, 10_000, "the hub is live");
    // A replay held open mid-way: its consumer exists while the hub's feed follows. (A tenant
    // replay of a single-replica stream takes its first DIRECT_READ_MAX events by a direct get,
    // then goes on with a consumer.)
    const replay = topic.replay({ tenantId: "q" })[Symbol.asyncIterator]();
    for (let i = 0; i <= DIRECT_READ_MAX; i++) await replay.next();
    const consumers = await readConsumers(fx.jsm, sync.namespace);
    await replay.return?.();
    ac.abort();
    await live;
    expect(consumers).toHaveLength(2);
    // Push consumers: the server counts the threshold only while nobody is subscribed to the
    // deliver subject, so a live slow read is never removed (checked on 2.9.10 and 2.15.1).
    for (const c of consumers) expect(c).toMatchObject({ inactiveMs: 5 * 60_000, push: true });
  });
});
