import { describe, it, expect } from "vitest";
import { createSync } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("core smoke", () => {
  it("core - publish, replay, follow, head", async () => {
    await using nats = await startTestNats();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url } });
    try {
      const t = sync.topic<{ n: number }>({ id: "inventory.events" });
      const r1 = await t.publish({ data: { n: 1 }, tenantId: "a" });
      const r2 = await t.publish({ data: { n: 2 }, tenantId: "b" });
      const r3 = await t.publish({ data: { n: 3 }, tenantId: "a", idempotencyKey: "k" });
      const r4 = await t.publish({ data: { n: 99 }, tenantId: "a", idempotencyKey: "k" });
      expect(r4).toEqual({ ...r3, duplicate: true });
      expect(r1.streamSequence).toBe(1);
      const all = [];
      for await (const e of t.replay()) all.push(e.data.n);
      expect(all).toEqual([1, 2, 3]);
      const a = [];
      for await (const e of t.replay({ tenantId: "a", after: r1.cursor })) a.push(e.data.n);
      expect(a).toEqual([3]);
      expect(t.cursorSequence(await t.head())).toBe(3);
      void r2;
      const ac = new AbortController();
      const got: number[] = [];
      const done = (async () => {
        for await (const e of t.follow({ tenantId: "a", after: r1.cursor, signal: ac.signal })) {
          got.push(e.data.n);
          if (got.length === 2) ac.abort();
        }
      })();
      await new Promise((r) => setTimeout(r, 200));
      await t.publish({ data: { n: 4 }, tenantId: "b" });
      await t.publish({ data: { n: 5 }, tenantId: "a" });
      await done;
      expect(got).toEqual([3, 5]);
    } finally {
      await sync.close();
    }
  });
});
