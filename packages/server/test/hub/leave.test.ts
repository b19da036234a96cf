/**
 * A hub subscriber that is cancelled while it reaches the live edge must end, and release its
 * follower (and the follower's consumer), even on a quiet tenant where nothing wakes it again.
 * The bridge's hub group does exactly that: it ends itself from its caught-up callback when
 * its last member left while it was catching up (issue 24, item 8).
 */
import { describe, it, expect } from "vitest";
import { hubRegistryOf, type SharedHub } from "../../src/index.js";
import { useCoreFixture } from "../core/fixture.js";
import { consumersOf, eventually } from "./fixture.js";

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
});
