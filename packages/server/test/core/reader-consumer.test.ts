import { describe, it, expect } from "vitest";
import { topicNames } from "../../src/core/streams.js";
import { useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("reader consumers", () => {
  it("read - a follow()'s ordered consumer keeps its state in memory, so fsync durability does not slow reads", async () => {
    const s = fx.sync();
    const topic = s.topic({ id: "mem.events" });
    await topic.publish({ data: 1, tenantId: "a" });
    const abort = new AbortController();
    const it = topic.follow({ tenantId: "a", signal: abort.signal })[Symbol.asyncIterator]();
    try {
      expect((await it.next()).value).toMatchObject({ data: 1 });
      const consumers = [];
      for await (const c of fx.jsm.consumers.list(topicNames(s.namespace, "mem.events").stream)) consumers.push(c);
      expect(consumers).toHaveLength(1);
      expect(consumers[0]!.config.mem_storage).toBe(true);
    } finally {
      abort.abort();
      await it.return?.();
    }
  });
});
