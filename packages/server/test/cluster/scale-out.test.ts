import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync } from "../../src/index.js";
import { startBridgeProcess, startTestCluster, writeBridgeConfig, type BridgeProcess } from "@tidemark/testing";
import { uniqueNamespace } from "@tidemark/testing";
import { TestClient } from "../bridge/client.js";
import { Publisher, faultConfigSource, faultTopicOptions } from "../fault/fixture.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-cluster-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("scale-out on a NATS cluster", () => {
  it("cluster - two bridge processes on a 3-node cluster serve one R3 topic; clients of either see the same events and cursors; a node restarts in place", async () => {
    await using cluster = await startTestCluster();
    const namespace = uniqueNamespace();
    const config = writeBridgeConfig(dir, faultConfigSource(namespace, 3));
    const bridges: BridgeProcess[] = [];
    const sync = createSync({ namespace, nats: { servers: cluster.urls }, requestTimeoutMs: 2_000 });
    try {
      const publisher = new Publisher(sync.topic<{ n: number }>(faultTopicOptions(3)));
      await publisher.publish("warmup");
      const [info] = await sync.listTopics();
      expect(info).toMatchObject({ id: "fault.events", replicas: 3 });
      // The bridges start on the provisioned topic: `tidemark serve` warms its topics' hub feeds
      // at start, and three processes provisioning the R3 streams at once on a fresh cluster kept
      // the meta leader busy past this sync's 2 s request timeout (2 of 6 runs).
      bridges.push(...(await Promise.all([0, 1].map(() => startBridgeProcess(["--nats", cluster.urls, "--config", config])))));
      // Every node holds a replica of the event stream.
      for (const node of cluster.nodes) {
        const jsz = (await (await fetch(new URL("/jsz", node.server!.monitorUrl))).json()) as { streams: number };
        expect(jsz.streams).toBeGreaterThanOrEqual(1);
      }

      const a = await TestClient.connect(bridges[0]!.wsUrl, "a@t1");
      const b = await TestClient.connect(bridges[1]!.wsUrl, "b@t1");
      const sa = await a.subscribe({ id: "s", topic: "fault.events", tenantId: "t1" });
      const sb = await b.subscribe({ id: "s", topic: "fault.events", tenantId: "t1" });
      await Promise.all([a.next((f) => f.type === "caught_up"), b.next((f) => f.type === "caught_up")]);
      for (let i = 0; i < 10; i++) await publisher.publish(i % 2 ? "t1" : "t2");
      const ea = await a.events(String(sa.hub), 5);
      const eb = await b.events(String(sb.hub), 5);
      expect(ea.map((f) => f.event)).toEqual(eb.map((f) => f.event));
      expect(new Set(ea.map((f) => (f.event as { eventId: string }).eventId))).toEqual(publisher.expected("t1"));

      // A node stops and starts again on the same client and route ports and the same store.
      const node = cluster.nodes[1]!;
      await cluster.stop(1);
      await cluster.start(1);
      expect(node.server!.port).toBe(node.clientPort);
      await cluster.ready();
      for (let i = 0; i < 4; i++) await publisher.publish("t1");
      expect((await a.events(String(sa.hub), 9)).length).toBe(9);
      expect((await b.events(String(sb.hub), 9)).length).toBe(9);
      a.close();
      b.close();
    } finally {
      await Promise.all(bridges.map((p) => p.kill()));
      await sync.close();
    }
  });
});
