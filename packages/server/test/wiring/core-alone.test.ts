/**
 * The topic core alone, through the internal entry: `createCoreSync()` on a transport, with no
 * hub or worker module. What it cannot do does not type-check (this file is part of `pnpm typecheck`),
 * and importing the hub and worker modules does not add it behind the type's back.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { InvalidArgumentError } from "@tidemark/shared";
import { createCoreSync, createSyncWith, nodeTransport, type CoreTopic } from "../../src/internal.js";
// Loaded for what they might register on import (the internal entry loads the hub, worker and
// bridge modules too): they must register nothing.
import type { Topic } from "../../src/index.js";
import "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("core alone", () => {
  it("core alone - a Sync of the core publishes and reads, and its topics have no hub(), process() or deadLetters() type", async () => {
    await using nats = await startTestNats();
    const sync = createCoreSync({ transport: nodeTransport }, { namespace: uniqueNamespace(), nats: { servers: nats.url } });
    try {
      const topic = sync.topic<number>({ id: "core.only" });
      expectTypeOf(topic).toEqualTypeOf<CoreTopic<number>>();
      expectTypeOf(topic).not.toHaveProperty("hub");
      expectTypeOf(topic).not.toHaveProperty("process");
      expectTypeOf(topic).not.toHaveProperty("deadLetters");
      const receipt = await topic.publish({ data: 7 });
      const seen: number[] = [];
      for await (const e of topic.replay()) seen.push(e.data);
      expect(seen).toEqual([7]);
      expect(await topic.head()).toBe(receipt.cursor);
      // Through a cast it fails clearly, though the hub and worker modules are loaded.
      expect(() => (topic as Topic<number>).hub()).toThrow(InvalidArgumentError);
      await expect((topic as Topic<number>).process({ consumer: "c", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } }, () => undefined)).rejects.toThrow(
        /createCoreSync/,
      );
    } finally {
      await sync.close();
    }
  });

  it("core alone - a whole Sync needs its hubs and workers at type-check", () => {
    // @ts-expect-error the platform lacks `hubs` and `workers`
    const make = () => createSyncWith({ transport: nodeTransport });
    expect(typeof make).toBe("function");
  });
});
