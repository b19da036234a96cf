/**
 * An upgrade the server refuses with an HTTP status (a bridge that is draining answers 503) is a
 * dropped connection like any other: the engine retries, and resumes once a bridge answers.
 * With Node's `ws` standing in for the browser's WebSocket, a refused upgrade is an `error`
 * event before the `close`; nothing may escape as an uncaught exception.
 */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { Engine } from "../src/engine.js";
import { attachTab, engines, startBridge, topic, until, useEngineSuite } from "./engine-fixture.js";

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
});
