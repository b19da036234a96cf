/**
 * The engine's saved history is per principal, and a refused feed shows nothing it saved
 * (setup in engine-fixture.ts).
 */
import { describe, expect, it } from "vitest";
import { createNodeBridge, expose, serveBridge } from "@tidemark/server";
import { Engine } from "../src/engine.js";
import { ada, attachTab, engines, running, startBridge, sync, topic, until, useEngineSuite, type User } from "./engine-fixture.js";

useEngineSuite();

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
