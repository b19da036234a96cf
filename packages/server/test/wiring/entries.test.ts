/**
 * Explicit wiring: the Node entry and the edge entry each build their own platform and process
 * default; importing one changes nothing in the other. The edge entry is imported first, so a
 * "last one wins" registration by the Node entry would show here.
 */
import { describe, expect, it } from "vitest";
import { connect as tcpConnect } from "@nats-io/transport-node";
import * as edge from "../../src/edge/index.js";
import * as node from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("wiring", () => {
  it("wiring - the edge entry keeps its own process default when the Node entry is loaded too", async () => {
    // Node's default would be an embedded server from the environment; edge has none.
    expect(() => edge.getDefaultSync()).toThrow(/configureSync/);
    const configured = edge.configureSync({ nats: { servers: "ws://127.0.0.1:1" } });
    try {
      expect(edge.getDefaultSync()).toBe(configured);
      const fromNode = node.configureSync({ nats: { servers: "nats://127.0.0.1:1" } });
      expect(fromNode).not.toBe(configured);
      expect(edge.getDefaultSync()).toBe(configured);
      expect(node.getDefaultSync()).toBe(fromNode);
      await fromNode.close();
    } finally {
      await configured.close();
    }
  });

  it("wiring - a Sync from each entry in one process has its own hubs, closed with it alone", async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const fromNode = node.createSync({ namespace, nats: { servers: nats.url } });
    const fromEdge = edge.createSync({ namespace, nats: { servers: nats.url }, connect: tcpConnect });
    try {
      expect(node.hubRegistryOf(fromNode)).not.toBe(edge.hubRegistryOf(fromEdge));
      const topic = fromNode.topic<number>({ id: "wired" });
      const edgeTopic = fromEdge.topic<number>({ id: "wired" });
      await topic.publish({ data: 0, tenantId: "a" });
      // A subscriber on each Sync's hub; closing the Node Sync retires only its own hubs.
      const read = (t: typeof topic, seen: number[], until: number) => {
        const controller = new AbortController();
        const done = (async () => {
          for await (const e of t.hub({ tenantId: "a" }).subscribe({ after: t.cursorAt(0), signal: controller.signal })) {
            seen.push(e.data);
            if (seen.length === until) controller.abort();
          }
        })();
        return done.catch((err: unknown) => seen.push(-1) && err);
      };
      const seenOnEdge: number[] = [];
      const seenOnNode: number[] = [];
      const edgeReading = read(edgeTopic, seenOnEdge, 2);
      const nodeReading = read(topic, seenOnNode, 1);
      await nodeReading;
      expect(seenOnNode).toEqual([0]);
      expect(topic.hub({ tenantId: "a" })).not.toBe(edgeTopic.hub({ tenantId: "a" }));
      await fromNode.close();
      await edgeTopic.publish({ data: 1, tenantId: "a" });
      await edgeReading;
      const seen = seenOnEdge;
      expect(seen).toEqual([0, 1]);
    } finally {
      await fromNode.close();
      await fromEdge.close();
    }
  });
});
