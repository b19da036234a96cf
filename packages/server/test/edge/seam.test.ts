/**
 * The transport seam of the edge entry: an edge Sync opens NATS through the injected `connect`
 * (here transport-node's TCP connect, the only NATS transport of this process), and refuses
 * clearly when no servers are given (there is no embedded server off Node).
 */
import { describe, expect, it } from "vitest";
import { connect as tcpConnect } from "@nats-io/transport-node";
import type { ConnectionOptions } from "@nats-io/nats-core";
import { configureSync, createSync, getDefaultSync } from "../../src/edge/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("edge seam", () => {
  it("edge seam - an edge Sync opens its connection through the injected connect and works through it", async () => {
    await using nats = await startTestNats();
    const calls: ConnectionOptions[] = [];
    const sync = createSync({
      namespace: uniqueNamespace(),
      nats: { servers: nats.url },
      connect: (options) => {
        calls.push(options);
        return tcpConnect(options);
      },
    });
    try {
      const topic = sync.topic<number>({ id: "seam" });
      const receipt = await topic.publish({ data: 1, tenantId: "a" });
      const seen = [];
      for await (const event of topic.replay({ tenantId: "a" })) seen.push(event.data);
      expect(seen).toEqual([1]);
      expect(await topic.head()).toBe(receipt.cursor);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ servers: [nats.url], name: "tidemark" });
    } finally {
      await sync.close();
    }
  });

  it("edge seam - without servers an edge Sync is refused: there is no embedded server and no environment", async () => {
    expect(() => createSync({} as never)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => getDefaultSync()).toThrow(/configureSync/);
    const sync = configureSync({});
    await expect(sync.ready()).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringMatching(/nats\.servers is required.*websocket/) });
    await sync.close();
  });
});
