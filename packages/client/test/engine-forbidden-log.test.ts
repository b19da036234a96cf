/**
 * One refused tab logs one "subscription forbidden" per subscription it asked for (issue 25,
 * item 7: the demo's tab, a hub feed with `onEffect` and a live ticker of the same tenant,
 * logged two lines that could not be told apart). Each line names its mode; a feed the server
 * refused is not asked again when the same tab opens it again (a listener added, a re-attach).
 */
import { describe, expect, it } from "vitest";
import { createNodeBridge, expose, serveBridge, type Logger } from "@tidemark/server";
import { ErrorCode } from "@tidemark/shared";
import { Engine } from "../src/engine.js";
import { createClient } from "../src/index.js";
import { ada, attachTab, engines, running, sync, topic, until, useEngineSuite, type User } from "./engine-fixture.js";

useEngineSuite();

async function startLoggedBridge(lines: { msg: string; fields: Record<string, unknown> }[]) {
  const bridge = createNodeBridge<User>({
    topics: [expose(topic, (user, { tenantId }) => tenantId !== undefined && user.tenants.includes(tenantId))],
    authenticate: (token) => (token === "token-ada" ? ada : undefined),
    principalKey: (u) => u.id,
    sync,
    logger: recordingLogger(lines),
    logLevel: "info",
  });
  const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
  running.push({ bridge, server });
  return server;
}

function recordingLogger(lines: { msg: string; fields: Record<string, unknown> }[]): Logger {
  const at = (fields: Record<string, unknown>, msg: string) => void lines.push({ msg, fields });
  const logger: Logger = { debug: at, info: at, warn: at, error: at, child: () => logger };
  return logger;
}

describe("engine - forbidden", () => {
  it("engine - a refused tab's feed, its effects and its live ticker log one 'subscription forbidden' per mode, each naming it", async () => {
    const lines: { msg: string; fields: Record<string, unknown> }[] = [];
    const server = await startLoggedBridge(lines);
    const client = createClient({ url: `ws://127.0.0.1:${server.port}/ws`, transport: "direct", database: "", getToken: () => "token-ada" });
    try {
      // As the demo does: the feed, its effects, its errors, and a live ticker of the same tenant.
      const feed = client.feed({ topic: "engine.feed", tenantId: "initech" });
      const errors: string[] = [];
      feed.onItems(() => undefined);
      feed.onEffect(() => undefined);
      feed.onError((e) => errors.push(e.code));
      const live = client.live({ topic: "engine.feed", tenantId: "initech" });
      live.onItems(() => undefined);
      await until(() => errors.length > 0 && live.error !== undefined);
      expect(errors).toEqual([ErrorCode.Forbidden]);
      // Listeners added later, on the refused feed, ask the server nothing more.
      feed.onEffect(() => undefined);
      feed.onItems(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
      const forbidden = lines.filter((l) => l.msg === "subscription forbidden");
      expect(forbidden.map((l) => l.fields.mode).sort()).toEqual(["hub", "live"]);
    } finally {
      client.close();
    }
  });

  it("engine - the same subscription of a tab opened again after a refusal is not asked again; a new one is", async () => {
    const lines: { msg: string; fields: Record<string, unknown> }[] = [];
    const server = await startLoggedBridge(lines);
    const engine = new Engine();
    engines.push(engine);
    const tab = await attachTab(engine, "t", server.port);
    const request = { id: "f", mode: "hub" as const, topic: "engine.feed", tenantId: "initech", effects: false };
    await engine.open("t", request);
    await until(() => tab.errors("f").length === 1);
    // The tab's own re-open (onEffect's, racing the refusal): the refusal stands, no new ask.
    await engine.open("t", { ...request, effects: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(lines.filter((l) => l.msg === "subscription forbidden")).toHaveLength(1);
    expect(tab.errors("f").length).toBeGreaterThanOrEqual(1);
    // A new subscription of the feed (the app opened it again): the server is asked again.
    await engine.open("t", { ...request, id: "g" });
    await until(() => lines.filter((l) => l.msg === "subscription forbidden").length === 2);
  });
});
