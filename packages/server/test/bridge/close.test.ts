/**
 * `serveBridge().close()` as an operator's SIGTERM handler relies on it: it ends. Node's
 * `server.close()` waits for every connection, and stops checking the request timeouts while
 * it waits, so one peer that keeps a connection open held a stop for ever (seen in e2e: the
 * first app's process outlived its test by a minute, 3 runs in 40, after a SharedWorker's
 * reconnect raced the drain).
 */
import { describe, it, expect } from "vitest";
import { startTestNats } from "@tidemark/testing";
import { rawConnection, servedBridge } from "./fixture.js";

describe("bridge - close()", () => {
  it("bridge - close() ends within its close timeout although peers keep their connections open: a request head never finished, an idle keep-alive connection, an upgrade refused while draining", async () => {
    await using nats = await startTestNats();
    const closeTimeoutMs = 500;
    const { sync, bridge, server } = await servedBridge(nats, { closeTimeoutMs, drainGraceMs: 100 });
    try {
      const halfSent = await rawConnection(server.port);
      halfSent.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"); // the head never ends
      const keepAlive = await rawConnection(server.port);
      keepAlive.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await expect.poll(keepAlive.received).toContain("HTTP/1.1 200");
      // Draining: an upgrade is refused with 503, and its client does not hang up.
      await bridge.drain({ graceMs: 0 });
      const refused = await rawConnection(server.port);
      refused.socket.write("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
      await expect.poll(refused.received).toContain("HTTP/1.1 503");

      const started = Date.now();
      const took = await Promise.race([server.close().then(() => Date.now() - started), new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 15_000))]);
      // Drain grace, then the close timeout for what the peers hold, and scheduling slack.
      expect(took).toBeLessThan(100 + 2 * closeTimeoutMs + 2_000);
      // Every connection was ended by the server, not left to its peer.
      const ended = (c: { closed: Promise<void> }) => Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000))]);
      expect(await Promise.all([halfSent, keepAlive, refused].map(ended))).toEqual([true, true, true]);
    } finally {
      await Promise.race([server.close(), new Promise((r) => setTimeout(r, 1_000))]);
      await sync.close();
    }
  });
});
