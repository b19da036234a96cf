/**
 * Shared setup of the engine suites: the engine (what runs in the SharedWorker) against a real
 * bridge, real NATS and real sockets, in Node: `ws` stands in for the browser's WebSocket class,
 * tabs are plain listeners. Call `useEngineSuite()` at the top of a test file.
 */
import { WebSocket as NodeWebSocket } from "ws";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createNodeBridge, createSync, expose, serveBridge, type Bridge, type BridgeServer, type Sync, type Topic } from "@tidemark/server";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { Engine } from "../src/engine.js";
import { TabView } from "../src/feed-log.js";
import type { EngineConfig, FeedItem, TabMessage } from "../src/types.js";

// Node 20 has no WebSocket global; ws speaks the same onopen/onmessage/onclose interface.
(globalThis as { WebSocket?: unknown }).WebSocket ??= NodeWebSocket;

export interface User {
  id: string;
  tenants: string[];
}
export const ada: User = { id: "ada", tenants: ["acme", "globex"] };
export const bob: User = { id: "bob", tenants: ["acme"] };

let nats: TestNats;
export let sync: Sync;
export let topic: Topic<{ n: number }>;
export const running: { bridge: Bridge; server: BridgeServer }[] = [];
export const engines: Engine[] = [];

export async function startBridge(port = 0): Promise<{ bridge: Bridge; server: BridgeServer }> {
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

export function config(port: number): EngineConfig {
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    backoff: { baseMs: 50, maxMs: 300 },
    historyLimit: 100,
    tabTimeoutMs: 60_000,
    connectTimeoutMs: 20_000,
    tokenRefreshMs: 0,
    database: "",
    principal: null,
  };
}

/** A tab as the engine sees it: a listener, plus what the app would get out of it. */
export async function attachTab(engine: Engine, id: string, port: number, user: { token: () => string; principal?: string } = { token: () => "token-ada" }) {
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

export async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const series = (bridge: Bridge, name: string) => {
  const line = bridge.metrics().split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
};

/** Registers the suite's server, bridge and engine lifecycle in the calling test file. */
export function useEngineSuite(): void {
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
}
