/**
 * Issue 14: broker cost per process grows with exposed topics, not with online tenants
 * (hub mode "topic", the default). Consumers are counted by the broker's own monitoring endpoint.
 */
import { describe, it, expect } from "vitest";
import type { TidemarkEvent } from "@tidemark/shared";
import type { SharedHub } from "../../src/index.js";
import { ownTenants, useBridgeFixture } from "../bridge/fixture.js";
import { consumersOf, eventually } from "./fixture.js";

const fx = useBridgeFixture();
const TENANTS = 1_000;
const BRIDGED = 20;
for (let i = 0; i < BRIDGED; i++) fx.tokens.set(`u${i}`, { id: `u${i}`, tenants: [`w${i}`] });

describe("hub scale", () => {
  it("hub - by default, 1,000 tenants subscribed by hub().subscribe and 20 more through a bridge hold one JetStream consumer per topic", async () => {
    // No hubMode: "topic" is the default.
    const sync = fx.sync({ hubs: { windowPollMs: 500 } });
    const notes = sync.topic<number>({ id: "notes" });
    const alerts = sync.topic<number>({ id: "alerts" });
    await notes.publish({ data: -1, tenantId: "t0" });
    const ac = new AbortController();
    const got = new Map<string, number[]>();
    let caughtUp = 0;
    const subscribe = (tenantId: string) => {
      const events: number[] = [];
      got.set(tenantId, events);
      const it = (notes.hub({ tenantId }) as SharedHub<number>).subscribe({ signal: ac.signal, progress: { onCaughtUp: () => caughtUp++ } });
      return (async () => {
        for await (const e of it as AsyncIterable<TidemarkEvent<number>>) events.push(e.data);
      })();
    };
    const done = Array.from({ length: TENANTS }, (_, i) => subscribe(`t${i}`));
    await eventually(() => caughtUp >= TENANTS, 60_000, "every hub subscriber caught up");
    const alertsHub = alerts.hub({ tenantId: "t1" }) as SharedHub<number>;
    const alertEvents: number[] = [];
    const alertDone = (async () => {
      for await (const e of alertsHub.subscribe({ signal: ac.signal })) alertEvents.push(e.data);
    })();

    const run = await fx.start({ topics: [{ topic: notes, authorize: ownTenants }] }, sync);
    const clients = await Promise.all(Array.from({ length: BRIDGED }, (_, i) => run.connect(`u${i}`)));
    const subs = await Promise.all(clients.map((c, i) => c.subscribe({ id: "s", topic: "notes", tenantId: `w${i}` })));
    await Promise.all(clients.map((c) => c.next((f) => f.type === "caught_up")));

    // Every tenant still gets its own events, and only those.
    const picked = [0, 1, 499, 999];
    for (const t of picked) await notes.publish({ data: t, tenantId: `t${t}` });
    await notes.publish({ data: 7, tenantId: "w7" });
    await alerts.publish({ data: 1, tenantId: "t1" });
    await eventually(() => picked.every((t) => got.get(`t${t}`)!.length === 1), 10_000, "the picked tenants' events");
    for (const t of picked) expect(got.get(`t${t}`)).toEqual([t]);
    const bridged = await clients[7]!.events(String(subs[7]!.hub), 1);
    expect((bridged[0]!.event as { data: number }).data).toBe(7);
    await eventually(() => alertEvents.length === 1);
    expect(got.get("t2")).toEqual([]);

    // Two exposed topics: two consumers, whatever the number of online tenants.
    expect(await consumersOf(fx.nats, sync.namespace)).toBe(2);
    ac.abort();
    await Promise.all([...done, alertDone]);
    for (const c of clients) c.close();
    await eventually(async () => (await consumersOf(fx.nats, sync.namespace)) === 0, 10_000, "consumers retired");
  }, 120_000);
});
