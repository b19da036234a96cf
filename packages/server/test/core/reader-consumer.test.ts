import { describe, it, expect } from "vitest";
import { topicNames } from "../../src/internal.js";
import { useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("reader consumers", () => {
  it("read - a replay's ordered consumer keeps its state in memory, so fsync durability does not slow it", async () => {
    const s = fx.sync();
    const topic = s.topic({ id: "mem.replay" });
    for (let i = 0; i < 100; i++) await topic.publish({ data: i });
    const stream = topicNames(s.namespace, "mem.replay").stream;
    let seen: boolean | undefined;
    for await (const e of topic.replay()) {
      if (e.data !== 0) continue;
      for await (const c of fx.jsm.consumers.list(stream)) seen = c.config.mem_storage;
    }
    expect(seen).toBe(true);
  });

  it("read - a follow()'s ordered consumer keeps its state in the file store, so it outlives a broker restart", async () => {
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
      expect(consumers[0]!.config.mem_storage ?? false).toBe(false);
    } finally {
      abort.abort();
      await it.return?.();
    }
  });
});
