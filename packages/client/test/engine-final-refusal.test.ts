/**
 * Refusals the client cannot get past end in the `failed` status with an error that says why,
 * in every tab, instead of an `offline` that retries forever without a word (issue 25, item 3):
 * - a socket refused for its Origin (the bridge accepts the upgrade of a client that offers the
 *   Tidemark subprotocol and closes it with 4403, which a browser can see; a plain 403 shows
 *   only as close 1006): ORIGIN_REFUSED, never retried;
 * - a token refused twice in a row (the second one fetched fresh): UNAUTHORIZED.
 * A tab that attaches later (a reload) tries again. Real bridge, real NATS, real sockets; `ws`
 * stands in for the browser's WebSocket and sends the Origin a page on another port would.
 */
import { WebSocket as NodeWebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { createNodeBridge, expose, serveBridge } from "@tidemark/server";
import { ErrorCode } from "@tidemark/shared";
import { Engine } from "../src/engine.js";
import { createClient } from "../src/index.js";
import { ada, attachTab, engines, running, series, sync, topic, until, useEngineSuite, type User } from "./engine-fixture.js";

useEngineSuite();

const APP = "http://127.0.0.1:8080";
/** What a page served by `vite dev` on another port sends. */
const OTHER = "http://localhost:5173";

/** Runs `fn` with a global WebSocket that sends `origin`, like a browser page on that origin. */
async function fromOrigin<T>(origin: string, fn: () => Promise<T>): Promise<T> {
  const saved = globalThis.WebSocket;
  class PageWebSocket extends NodeWebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { origin });
    }
  }
  (globalThis as { WebSocket: unknown }).WebSocket = PageWebSocket;
  try {
    return await fn();
  } finally {
    (globalThis as { WebSocket: unknown }).WebSocket = saved;
  }
}

async function startAllowListBridge() {
  const bridge = createNodeBridge<User>({
    topics: [expose(topic, (user, { tenantId }) => tenantId !== undefined && user.tenants.includes(tenantId))],
    authenticate: (token) => (token === "token-ada" ? ada : undefined),
    principalKey: (u) => u.id,
    sync,
    origins: [APP],
    logLevel: "error",
  });
  const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
  running.push({ bridge, server });
  return { bridge, server };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("engine - final refusals", () => {
  it("engine - a socket refused for its origin reports ORIGIN_REFUSED with the reason to every tab and is not retried", async () => {
    const { bridge, server } = await startAllowListBridge();
    await fromOrigin(OTHER, async () => {
      const engine = new Engine();
      engines.push(engine);
      const one = await attachTab(engine, "one", server.port);
      const two = await attachTab(engine, "two", server.port);
      await engine.open("one", { id: "f1", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      await engine.open("two", { id: "f2", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      for (const tab of [one, two]) await until(() => tab.status()?.type === "status" && tab.status()!.status === "failed");
      for (const tab of [one, two]) {
        const status = tab.status();
        expect(status).toMatchObject({ type: "status", status: "failed", error: { code: ErrorCode.OriginRefused } });
        expect(status?.type === "status" && status.error?.message).toMatch(/origin/i);
      }
      // Final: the backoff (50–300 ms here) would have tried several times in a second.
      await sleep(1_000);
      expect((await engine.stats()).socketsOpened).toBe(1);
      expect(series(bridge, 'tidemark_bridge_rejected_total{reason="origin"}')).toBe(1);
      // A tab that attaches later (a reload, a fixed deployment) tries once more.
      const three = await attachTab(engine, "three", server.port);
      await until(async () => (await engine.stats()).socketsOpened === 2);
      await until(() => three.status()?.type === "status" && three.status()!.status === "failed");
    });
  });

  it("engine - a token refused twice in a row (the second one fresh) reports UNAUTHORIZED and stops; one refusal is retried", async () => {
    const { server } = await startAllowListBridge();
    await fromOrigin(APP, async () => {
      const engine = new Engine();
      engines.push(engine);
      let asked = 0;
      const tab = await attachTab(engine, "t", server.port, { token: () => (++asked === 1 ? "token-expired" : asked === 2 ? "token-ada" : "token-bad") });
      await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      // The first token is refused, the fresh one accepted.
      await until(() => tab.status()?.type === "status" && tab.status()!.status === "live");
      expect(asked).toBe(2);

      const bad = new Engine();
      engines.push(bad);
      let badAsked = 0;
      const refused = await attachTab(bad, "b", server.port, { token: () => (badAsked++, "token-bad") });
      await bad.open("b", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      await until(() => refused.status()?.type === "status" && refused.status()!.status === "failed");
      expect(refused.status()).toMatchObject({ status: "failed", error: { code: ErrorCode.Unauthorized } });
      await sleep(1_000);
      expect(badAsked).toBe(2);
      expect((await bad.stats()).socketsOpened).toBe(2);
    });
  });

  it("client - the tab's state, every feed's error and onError carry ORIGIN_REFUSED", async () => {
    const { server } = await startAllowListBridge();
    await fromOrigin(OTHER, async () => {
      const client = createClient({ url: `ws://127.0.0.1:${server.port}/ws`, transport: "direct", database: "", getToken: () => "token-ada" });
      try {
        const feed = client.feed({ topic: "engine.feed", tenantId: "acme" });
        const live = client.live({ topic: "engine.feed", tenantId: "acme" });
        const heard: string[] = [];
        feed.onError((e) => heard.push(`feed:${e.code}`));
        live.onError((e) => heard.push(`live:${e.code}`));
        await until(() => client.state.status === "failed");
        expect(client.state.error).toMatchObject({ code: ErrorCode.OriginRefused, name: "OriginRefusedError" });
        await until(() => heard.length === 2);
        expect(heard.sort()).toEqual([`feed:${ErrorCode.OriginRefused}`, `live:${ErrorCode.OriginRefused}`]);
        expect(feed.error?.code).toBe(ErrorCode.OriginRefused);
      } finally {
        client.close();
      }
    });
  });
});
