/** The shared bridge protocol suite on Cloudflare workerd (wsconnect, a Durable Object), and the object's idle shutdown. */
import { describe, expect, it } from "vitest";
import { startTestNats, monitor, uniqueNamespace } from "@tidemark/testing";
import { TestClient } from "../bridge/client.js";
import { protocolSuite } from "./protocol.suite.js";
import { workerdRuntime } from "./runtimes.js";

protocolSuite(workerdRuntime);

describe("edge workerd object", () => {
  it("edge workerd - an idle bridge object closes its NATS connection, and the next client gets a fresh one", async () => {
    await using nats = await startTestNats();
    const bridge = await workerdRuntime.start({
      natsUrl: nats.url,
      natsWsUrl: nats.wsUrl!,
      namespace: uniqueNamespace("edge"),
      env: { TIDEMARK_IDLE_MS: "500" },
    });
    const objectConnections = async () =>
      (await monitor<{ connections?: { name?: string }[] }>(nats, "/connz?limit=1000")).connections?.filter((c) => c.name === "tidemark-workerd").length ?? 0;
    const until = async (want: number) => {
      const deadline = Date.now() + 20_000;
      while ((await objectConnections()) !== want) {
        if (Date.now() > deadline) throw new Error(`expected ${want} NATS connections of the object, have ${await objectConnections()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      const first = await TestClient.connect(bridge.wsUrl, "alice");
      await first.subscribe({ id: "s", topic: "notes", tenantId: "a-1" });
      await first.next((f) => f.type === "caught_up");
      await until(1);
      first.close();
      await first.closed;
      await until(0);
      const second = await TestClient.connect(bridge.wsUrl, "alice");
      await second.subscribe({ id: "s", topic: "notes", tenantId: "a-1" });
      await second.next((f) => f.type === "caught_up");
      expect(await objectConnections()).toBe(1);
      second.close();
    } finally {
      await bridge.close();
    }
  });
});
