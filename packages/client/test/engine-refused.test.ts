/**
 * Connections that never reach `welcome` are dropped connections like any other: the engine
 * retries, and resumes once a bridge answers.
 * - An upgrade refused with an HTTP status (a draining bridge answers 503). With Node's `ws`
 *   standing in for the browser's WebSocket it is an `error` event before the `close`; nothing
 *   may escape as an uncaught exception.
 * - A server that accepts the connection and never answers (a frozen bridge): given up after
 *   `connectTimeoutMs`.
 */
import { createServer } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { Engine } from "../src/engine.js";
import type { TabMessage } from "../src/types.js";
import { attachTab, config, engines, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

useEngineSuite();

describe("engine", () => {
  it("engine - upgrades refused with 503 are retried, and the feed subscribes once a bridge answers", async () => {
    let refused = 0;
    const refusing = createServer();
    refusing.on("upgrade", (_req, socket) => {
      refused++;
      socket.end("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const port = (refusing.address() as { port: number }).port;
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", record);
    try {
      const engine = new Engine();
      engines.push(engine);
      const tab = await attachTab(engine, "t", port);
      await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
      await until(() => refused >= 3);
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
      refusing.closeAllConnections();

      await startBridge(port);
      await until(() => tab.status()?.type === "status" && tab.status()!.status === "live");
      const sent = await topic.publish({ tenantId: "acme", data: { n: 1 } });
      await until(() => tab.sequences("f").includes(sent.streamSequence));
      expect(uncaught).toEqual([]);
      expect((await engine.stats()).socketsOpened).toBeGreaterThan(refused);
    } finally {
      process.off("uncaughtException", record);
    }
  });

  it("engine - a server that accepts and never answers is given up after connectTimeoutMs, and the feed subscribes once a bridge answers", async () => {
    const held: Socket[] = [];
    const dropped = new Set<Socket>();
    const silent = createTcpServer((socket) => {
      held.push(socket);
      socket.on("close", () => dropped.add(socket)).resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const engine = new Engine();
    engines.push(engine);
    const messages: TabMessage[] = [];
    const status = () => messages.filter((m) => m.type === "status").at(-1);
    await engine.attach({ id: "t", focused: true }, { ...config(port), connectTimeoutMs: 400 }, (m) => messages.push(m), () => "token-ada");
    await engine.open("t", { id: "f", mode: "hub", topic: "engine.feed", tenantId: "acme", effects: false });
    // Each held connection is dropped at its deadline and a new one opened after the backoff.
    await until(() => held.length >= 3);
    await until(() => held.slice(0, 2).every((s) => dropped.has(s)));
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    for (const s of held) s.destroy();

    await startBridge(port);
    await until(() => status()?.type === "status" && status()!.status === "live");
    const sent = await topic.publish({ tenantId: "acme", data: { n: 2 } });
    await until(() => messages.some((m) => m.type === "items" && m.items.some((i) => i.kind === "event" && i.event.streamSequence === sent.streamSequence)));
    expect((await engine.stats()).socketsOpened).toBeGreaterThan(held.length - 1);
  });
});
