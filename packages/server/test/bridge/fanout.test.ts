import { describe, it, expect } from "vitest";
import type { SharedHub, SharedHubSubscribeOptions, Topic } from "../../src/index.js";
import type { TidemarkEvent } from "@tidemark/shared";
import { ownTenants, useBridgeFixture } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });
const data = (f: Record<string, unknown>) => (f.event as { data: string }).data;

/** The topic with its hubs' iterations counted: every event an iteration hands out is one pull. */
function counted<T>(topic: Topic<T>) {
  const stats = { pulls: 0, iterations: 0 };
  const wrap = (hub: SharedHub<T>): SharedHub<T> => {
    // keeps `instanceof SharedHub` (the bridge uses the topic's own hubs then); the bridge reads
    // hubs in arrays (subscribeBatches): each event in an array counts as one pull
    const view = Object.create(hub) as SharedHub<T>;
    const subscribeBatches = (options?: SharedHubSubscribeOptions) => ({
      [Symbol.asyncIterator]: () => {
        stats.iterations++;
        const it = hub.subscribeBatches(options)[Symbol.asyncIterator]();
        return {
          next: async () => {
            const r = await it.next();
            if (!r.done) stats.pulls += r.value.length;
            return r;
          },
          return: (v?: unknown) => it.return?.(v) ?? Promise.resolve({ done: true as const, value: undefined }),
        } as AsyncIterator<readonly TidemarkEvent<T>[]>;
      },
    });
    Object.defineProperty(view, "subscribeBatches", { value: subscribeBatches });
    return view;
  };
  const proxy = new Proxy(topic, {
    get(target, prop) {
      if (prop === "hub") return (o?: { tenantId?: string }) => wrap(target.hub(o) as SharedHub<T>);
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { topic: proxy, stats };
}

describe("bridge live fan-out", () => {
  it("bridge - caught-up sockets of one tenant get each live event from the hub's fan-out, with no iteration step per socket; each gets it once, in order", async () => {
    const sync = fx.sync();
    const real = sync.topic<string>({ id: "notes" });
    await real.publish({ data: "a0", tenantId: "a" });
    const { topic, stats } = counted(real);
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxConnectionsPerPrincipal: 100 } }, sync);
    const clients = await Promise.all(Array.from({ length: 20 }, () => run.connect("alice")));
    const hubs = await Promise.all(clients.map((c) => c.subscribe({ id: "s", topic: "notes", tenantId: "a" })));
    await Promise.all(clients.map((c) => c.next((f) => f.type === "caught_up")));
    // Subscribed without a cursor: live from the head (a0 is before it).
    // At the live edge every subscription is a sink of the hub: events reach all 20 sockets
    // without a step of any iteration, and no socket starts one.
    const { pulls, iterations } = stats;
    const sent = Array.from({ length: 30 }, (_, i) => `a${i + 1}`);
    for (const d of sent) await real.publish({ data: d, tenantId: "a" });
    for (const [k, c] of clients.entries()) expect((await c.events(String(hubs[k]!.hub), sent.length)).map(data)).toEqual(sent);
    expect(stats.pulls - pulls).toBe(0);
    expect(stats.iterations - iterations).toBe(0);
  });
});
