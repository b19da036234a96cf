/**
 * The engine (what runs in the SharedWorker) against a real bridge, real NATS and real sockets,
 * in Node (setup in engine-fixture.ts): sharing, resume, refusals, and feeds that always subscribe.
 */
import { describe, expect, it } from "vitest";
import type { Bridge } from "@tidemark/server";
import { Engine } from "../src/engine.js";
import { attachTab, engines, running, series, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

useEngineSuite();

describe("engine", () => {
  it("engine - tabs on one feed share one socket and one server subscription, each sees every event once", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const a = await attachTab(engine, "a", server.port);
    const b = await attachTab(engine, "b", server.port);
    await engine.open("a", { id: "fa", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: true });
    await engine.open("b", { id: "fb", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: true });
    await until(() => a.status()?.type === "status" && a.status()!.status === "live" && b.status()!.status === "live");

    const receipts = [];
    for (let n = 1; n <= 5; n++) receipts.push(await topic.publish({ tenantId: "acme", data: { n } }));
    await topic.publish({ tenantId: "globex", data: { n: 99 } });
    const expected = receipts.map((r) => r.streamSequence);
    await until(() => a.sequences("fa").length === 5 && b.sequences("fb").length === 5);
    expect(a.sequences("fa")).toEqual(expected);
    expect(b.sequences("fb")).toEqual(expected);
    expect(bridge.connectionCount).toBe(1);
    expect(series(bridge, 'tidemark_bridge_subscriptions{mode="hub"}')).toBe(1);
    expect(series(bridge, "tidemark_bridge_events_delivered_total")).toBe(5);
    // Exactly one of the two tabs was told to perform the effects.
    const effects = [a, b].map((t) => t.messages.filter((m) => m.type === "items" && m.effects).length);
    expect(effects.filter((n) => n > 0)).toHaveLength(1);
    expect((await engine.stats()).tabs).toBe(2);
  });

  it("engine - resumes from its cursor after the bridge restarts, with no hole and no duplicate", async () => {
    const first = await startBridge();
    const port = first.server.port;
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", port);
    await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "globex", effects: false });
    await until(() => tab.status()?.type === "status" && tab.status()!.status === "live");
    const before = (await topic.publish({ tenantId: "globex", data: { n: 1 } })).streamSequence;
    await until(() => tab.sequences("f").length === 1);

    await first.server.close();
    running.splice(running.indexOf(first), 1);
    await until(() => tab.status()?.type === "status" && tab.status()!.status !== "live");
    const missed = [];
    for (let n = 2; n <= 4; n++) missed.push((await topic.publish({ tenantId: "globex", data: { n } })).streamSequence);

    await startBridge(port);
    await until(() => tab.sequences("f").length === 4);
    const after = (await topic.publish({ tenantId: "globex", data: { n: 5 } })).streamSequence;
    await until(() => tab.sequences("f").length === 5);
    expect(tab.sequences("f")).toEqual([before, ...missed, after]);
    expect((await engine.stats()).socketsOpened).toBeGreaterThanOrEqual(2);
  });

  it("engine - a refused feed reaches its tabs with its code, the others go on", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    await engine.open("t", { id: "no", mode: "hub", topic: "engine.feed", tenantId: "initech", effects: false });
    await engine.open("t", { id: "yes", mode: "live", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => tab.errors("no").length === 1);
    expect(tab.errors("no")[0]).toMatchObject({ code: "FORBIDDEN" });
    // A refused feed does not hold the tab back from `live`.
    await until(() => tab.status()?.type === "status" && tab.status()!.status === "live");
    const sequence = (await topic.publish({ tenantId: "acme", data: { n: 7 } })).streamSequence;
    await until(() => tab.sequences("yes").length === 1);
    expect(tab.sequences("yes")).toEqual([sequence]);
    expect(series(bridge, 'tidemark_bridge_subscriptions{mode="live"}')).toBe(1);
  });

  it("engine - the last tab to leave ends the server subscription and closes the socket", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => tab.status()?.type === "status" && tab.status()!.status === "live");
    expect(bridge.connectionCount).toBe(1);
    await engine.close("t", "f");
    await until(() => series(bridge, 'tidemark_bridge_subscriptions{mode="hub"}') === 0);
    expect(bridge.connectionCount).toBe(1);
    await engine.detach("t");
    await until(() => bridge.connectionCount === 0);
  });
});

describe("engine - every feed subscribes, whenever it is opened", () => {
  const live = (tab: Awaited<ReturnType<typeof attachTab>>) => tab.status()?.type === "status" && tab.status()!.status === "live";
  const subs = (bridge: Bridge, mode: "hub" | "live") => series(bridge, `tidemark_bridge_subscriptions{mode="${mode}"}`);

  /** Publishes one event and waits until both feeds of `tenant` show it. */
  async function flows(tab: Awaited<ReturnType<typeof attachTab>>, tenant: string, hubSub: string, liveSub: string): Promise<void> {
    const before = [tab.sequences(hubSub).length, tab.sequences(liveSub).length];
    const sequence = (await topic.publish({ tenantId: tenant, data: { n: 1 } })).streamSequence;
    await until(() => tab.sequences(hubSub).length > before[0]! && tab.sequences(liveSub).length > before[1]!);
    expect(tab.sequences(hubSub).at(-1)).toBe(sequence);
    expect(tab.sequences(liveSub).at(-1)).toBe(sequence);
  }

  it("engine - a hub and a live feed opened on an open socket subscribe and reach live", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    await engine.open("t", { id: "first", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(tab));
    // The socket is open now: open both kinds of feed on it.
    await engine.open("t", { id: "hub", mode: "hub", topic: "engine.feed", tenantId: "globex", effects: false });
    await engine.open("t", { id: "live", mode: "live", topic: "engine.feed", tenantId: "globex", effects: false });
    await until(() => subs(bridge, "hub") === 2 && subs(bridge, "live") === 1);
    await until(() => live(tab));
    await flows(tab, "globex", "hub", "live");
  });

  it("engine - feeds opened before the socket connects, and while it connects, subscribe", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    // Attach starts the connection; opening at once lands while it connects.
    const tab = await attachTab(engine, "t", server.port);
    await Promise.all([
      engine.open("t", { id: "hub", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false }),
      engine.open("t", { id: "live", mode: "live", topic: "engine.feed", tenantId: "acme", effects: false }),
    ]);
    await until(() => subs(bridge, "hub") === 1 && subs(bridge, "live") === 1);
    await until(() => live(tab));
    await flows(tab, "acme", "hub", "live");
  });

  it("engine - after a reconnect, feeds opened before and after it subscribe", async () => {
    const first = await startBridge();
    const port = first.server.port;
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", port);
    await engine.open("t", { id: "live", mode: "live", topic: "engine.feed", tenantId: "acme", effects: false });
    await engine.open("t", { id: "hub", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(tab));
    await first.server.close();
    running.splice(running.indexOf(first), 1);
    await until(() => !live(tab));
    const { bridge } = await startBridge(port);
    await until(() => live(tab) && subs(bridge, "live") === 1 && subs(bridge, "hub") === 1);
    await flows(tab, "acme", "hub", "live");
    await engine.open("t", { id: "hub2", mode: "hub", topic: "engine.feed", tenantId: "globex", effects: false });
    await engine.open("t", { id: "live2", mode: "live", topic: "engine.feed", tenantId: "globex", effects: false });
    await until(() => live(tab) && subs(bridge, "live") === 2 && subs(bridge, "hub") === 2);
    await flows(tab, "globex", "hub2", "live2");
  });

  it("engine - switching a tab's feeds to another tenant and back: every feed subscribes and the tab is live", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    const open = async (tenant: string, n: number) => {
      await engine.open("t", { id: `hub${n}`, mode: "hub", topic: "engine.feed", tenantId: tenant, effects: true });
      await engine.open("t", { id: `live${n}`, mode: "live", topic: "engine.feed", tenantId: tenant, effects: false });
    };
    const close = async (n: number) => {
      await engine.close("t", `hub${n}`);
      await engine.close("t", `live${n}`);
    };
    await open("acme", 1);
    await until(() => live(tab));
    // What the demo's tenant switcher does: close the tenant's feeds, open the other's.
    await close(1);
    await open("globex", 2);
    await until(() => live(tab) && subs(bridge, "hub") === 1 && subs(bridge, "live") === 1);
    await flows(tab, "globex", "hub2", "live2");
    await close(2);
    await open("acme", 3);
    await until(() => live(tab) && subs(bridge, "hub") === 1 && subs(bridge, "live") === 1);
    await flows(tab, "acme", "hub3", "live3");
  });
});
