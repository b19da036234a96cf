/**
 * The engine (what runs in the SharedWorker) against a real bridge, real NATS and real sockets,
 * in Node: `ws` stands in for the browser's WebSocket class, tabs are plain listeners.
 */
import { WebSocket as NodeWebSocket } from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createNodeBridge, createSync, expose, serveBridge, type Bridge, type BridgeServer, type Sync, type Topic } from "@tidemark/server";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { Engine } from "../src/engine.js";
import { TabView } from "../src/feed-log.js";
import type { EngineConfig, FeedItem, TabMessage } from "../src/types.js";

// Node 20 has no WebSocket global; ws speaks the same onopen/onmessage/onclose interface.
(globalThis as { WebSocket?: unknown }).WebSocket ??= NodeWebSocket;

interface User {
  id: string;
  tenants: string[];
}
const ada: User = { id: "ada", tenants: ["acme", "globex"] };
const bob: User = { id: "bob", tenants: ["acme"] };

let nats: TestNats;
let sync: Sync;
let topic: Topic<{ n: number }>;
const running: { bridge: Bridge; server: BridgeServer }[] = [];
const engines: Engine[] = [];

async function startBridge(port = 0): Promise<{ bridge: Bridge; server: BridgeServer }> {
  const bridge = createNodeBridge<User>({
    topics: [expose(topic, (user, { tenantId }) => tenantId !== undefined && user.tenants.includes(tenantId))],
    authenticate: (token) => (token === "token-ada" ? ada : token === "token-bob" ? bob : undefined),
    principalKey: (u) => u.id,
    sync,
    logLevel: "error",
  });
  const server = await serveBridge(bridge, { port, drainGraceMs: 100 });
  const entry = { bridge, server };
  running.push(entry);
  return entry;
}

function config(port: number): EngineConfig {
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    backoff: { baseMs: 50, maxMs: 300 },
    historyLimit: 100,
    tabTimeoutMs: 60_000,
    tokenRefreshMs: 0,
    database: "",
    principal: null,
  };
}

/** A tab as the engine sees it: a listener, plus what the app would get out of it. */
async function attachTab(engine: Engine, id: string, port: number, user: { token: () => string; principal?: string } = { token: () => "token-ada" }) {
  const messages: TabMessage[] = [];
  const views = new Map<string, TabView>();
  const shown = new Map<string, FeedItem[]>();
  await engine.attach({ id, focused: false }, { ...config(port), principal: user.principal ?? null }, (m) => {
    messages.push(m);
    if (m.type === "snapshot" && m.replace) {
      views.delete(m.sub);
      shown.delete(m.sub);
    }
    if (m.type === "snapshot" || m.type === "items") {
      const view = views.get(m.sub) ?? new TabView();
      views.set(m.sub, view);
      shown.set(m.sub, [...(shown.get(m.sub) ?? []), ...view.accept(m.items)]);
    }
  }, user.token);
  return {
    messages,
    /** Stream sequences the app saw on a subscription, in order. */
    sequences: (sub: string) => (shown.get(sub) ?? []).map((i) => (i.kind === "event" ? i.event.streamSequence : `gap`)),
    status: () => messages.filter((m) => m.type === "status").at(-1),
    errors: (sub: string) => messages.flatMap((m) => (m.type === "sub_error" && m.sub === sub ? [m.error] : [])),
  };
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const series = (bridge: Bridge, name: string) => {
  const line = bridge.metrics().split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
};

beforeAll(async () => {
  nats = await startTestNats();
  sync = createSync({ namespace: uniqueNamespace("client"), nats: { servers: nats.url } });
  topic = sync.topic<{ n: number }>({ id: "engine.feed" });
  await topic.head();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.shutdown()));
  await Promise.all(running.splice(0).map((r) => r.server.close()));
});
afterAll(async () => {
  await sync?.close();
  await nats?.[Symbol.asyncDispose]();
});

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

describe("engine - history per principal, nothing shown of a refused feed", () => {
  const live = (tab: Awaited<ReturnType<typeof attachTab>>) => tab.status()?.type === "status" && tab.status()!.status === "live";
  const itemsSent = (tab: Awaited<ReturnType<typeof attachTab>>, sub: string) =>
    tab.messages.flatMap((m) => ((m.type === "snapshot" || m.type === "items") && m.sub === sub ? m.items : []));

  it("engine - a feed opened again after access was revoked shows nothing of what was saved, only the refusal", async () => {
    const allowed = new Set(["acme"]);
    const bridge = createNodeBridge<User>({
      topics: [expose(topic, (_user, { tenantId }) => tenantId !== undefined && allowed.has(tenantId))],
      authenticate: (token) => (token === "token-ada" ? ada : undefined),
      principalKey: (u) => u.id,
      sync,
      logLevel: "error",
    });
    const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
    running.push({ bridge, server });
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    await engine.open("t", { id: "before", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(tab));
    for (let n = 1; n <= 2; n++) await topic.publish({ tenantId: "acme", data: { n } });
    await until(() => tab.sequences("before").length === 2);
    await engine.close("t", "before");

    allowed.delete("acme");
    await engine.open("t", { id: "after", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => tab.errors("after").length === 1);
    expect(tab.errors("after")[0]).toMatchObject({ code: "FORBIDDEN" });
    expect(itemsSent(tab, "after")).toEqual([]);
    expect(tab.sequences("after")).toEqual([]);
  });

  it("engine - access revoked while shown: the tab's items are replaced by nothing", async () => {
    const allowed = new Set(["acme"]);
    const bridge = createNodeBridge<User>({
      topics: [expose(topic, (_user, { tenantId }) => tenantId !== undefined && allowed.has(tenantId))],
      authenticate: (token) => (token === "token-ada" ? ada : undefined),
      principalKey: (u) => u.id,
      sync,
      logLevel: "error",
    });
    const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
    running.push({ bridge, server });
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(tab));
    await topic.publish({ tenantId: "acme", data: { n: 1 } });
    await until(() => tab.sequences("f").length === 1);
    allowed.delete("acme");
    await bridge.reauthorize();
    await until(() => tab.errors("f").length === 1);
    await until(() => tab.sequences("f").length === 0);
    expect(tab.messages.some((m) => m.type === "snapshot" && m.sub === "f" && m.replace && m.items.length === 0)).toBe(true);
  });

  it("engine - a tab of another user replaces the token, the socket and what every tab shows", async () => {
    const { bridge, server } = await startBridge();
    const engine = new Engine();
    engines.push(engine);
    const adaTab = await attachTab(engine, "a", server.port, { token: () => "token-ada", principal: "ada" });
    await engine.open("a", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(adaTab));
    await topic.publish({ tenantId: "acme", data: { n: 1 } });
    await until(() => adaTab.sequences("f").length === 1);
    const adaConnection = (await engine.stats()).connectionId;

    const bobTab = await attachTab(engine, "b", server.port, { token: () => "token-bob", principal: "bob" });
    await engine.open("b", { id: "g", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    await until(() => live(bobTab));
    expect((await engine.stats()).connectionId).not.toBe(adaConnection);
    expect(adaTab.sequences("f")).toEqual([]);
    expect(itemsSent(bobTab, "g")).toEqual([]);
    // bob starts at the head: only what is published from now on.
    const sequence = (await topic.publish({ tenantId: "acme", data: { n: 2 } })).streamSequence;
    await until(() => bobTab.sequences("g").length === 1);
    expect(bobTab.sequences("g")).toEqual([sequence]);
    expect(bridge.connectionCount).toBe(1);
  });
});
