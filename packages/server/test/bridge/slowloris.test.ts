import { describe, it, expect } from "vitest";
import { startTestNats } from "@tidemark/testing";
import { rawConnection, servedBridge } from "./fixture.js";

describe("bridge - slow clients", () => {
  it("bridge - a socket that never finishes its upgrade request is dropped after headersTimeoutMs", async () => {
    await using nats = await startTestNats();
    const { sync, server } = await servedBridge(nats, { headersTimeoutMs: 1_000 });
    try {
      const { socket, closed } = await rawConnection(server.port);
      socket.write("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"); // never ends the head
      const started = Date.now();
      const closedAfter = await Promise.race([closed.then(() => Date.now() - started), new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 15_000))]);
      socket.destroy();
      // Node's defaults (60 s timeout, checked every 30 s) would keep it far longer.
      expect(closedAfter).toBeLessThan(15_000);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
      await sync.close();
    }
  });
});
