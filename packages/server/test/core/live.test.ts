import { describe, it, expect } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { monitor } from "@tidemark/testing";
import { failure, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

interface Jsz { consumers: number }

describe("live", () => {
  it("live - new events only, filtered by tenant on the server, no JetStream consumer", async () => {
    const t = fx.sync().topic<number>({ id: "live.events" });
    await t.publish({ data: 0, tenantId: "a" }); // before: never delivered
    const ac = new AbortController();
    const seen: { data: number; tenantId?: string; seq: number }[] = [];
    const done = (async () => {
      for await (const e of t.live({ tenantId: "a", signal: ac.signal })) {
        seen.push({ data: e.data, tenantId: e.tenantId, seq: e.streamSequence });
        if (e.data === 3) ac.abort();
      }
    })();
    // live() has no cursor: publish until the subscription is in place, then the marked events.
    let warm = 100;
    while (seen.length === 0) {
      await t.publish({ data: warm++, tenantId: "a" });
      await new Promise((r) => setTimeout(r, 20));
    }
    const { consumers } = await monitor<Jsz>(fx.nats, "/jsz");
    expect(consumers).toBe(0);
    for (const [data, tenantId] of [[1, "b"], [2, "a"], [3, "a"]] as const) await t.publish({ data, tenantId });
    await done;
    const marked = seen.filter((e) => e.data < 100);
    expect(marked.map((e) => e.data)).toEqual([2, 3]);
    expect(seen.every((e) => e.tenantId === "a")).toBe(true);
    // Events carry their stream position, like every other read.
    expect(marked[1]!.seq).toBe(marked[0]!.seq + 1);
  });

  it("live - a whole-topic reader sees every tenant; a bad tenant fails from iteration", async () => {
    const t = fx.sync().topic<string>({ id: "live.all" });
    const ac = new AbortController();
    const seen = new Set<string | undefined>();
    const done = (async () => {
      for await (const e of t.live({ signal: ac.signal })) {
        seen.add(e.tenantId);
        if (seen.size === 3) ac.abort();
      }
    })();
    while (!ac.signal.aborted) {
      for (const tenantId of ["x", "y", undefined]) await t.publish({ data: "d", tenantId });
      await new Promise((r) => setTimeout(r, 20));
    }
    await done;
    expect([...seen].sort()).toEqual(["x", "y", undefined].sort());
    expect(await failure(t.live({ tenantId: "" }))).toBeInstanceOf(InvalidArgumentError);
  });

  it("live - subscribes when called: an event published before the first read arrives", async () => {
    const t = fx.sync().topic<number>({ id: "live.early" });
    await t.head(); // provisioned, so live() can subscribe at once
    const ac = new AbortController();
    const iterable = t.live({ tenantId: "a", signal: ac.signal });
    // No wait: the subscription went out on the connection before these publishes.
    await t.publish({ data: 1, tenantId: "a" });
    await t.publish({ data: 2, tenantId: "b" });
    await t.publish({ data: 3, tenantId: "a" });
    await new Promise((r) => setTimeout(r, 200));
    const it = iterable[Symbol.asyncIterator]();
    const first = await it.next();
    const second = await it.next();
    expect([first.value?.data, second.value?.data]).toEqual([1, 3]);
    ac.abort();
    expect((await it.next()).done).toBe(true);

    // The same before the topic's first use in the process: it subscribes once provisioned,
    // ahead of a publish that was waiting for the same provisioning.
    const fresh = fx.sync().topic<number>({ id: "live.fresh" });
    const ac2 = new AbortController();
    const early = fresh.live({ signal: ac2.signal });
    await fresh.publish({ data: 7 });
    const got = await early[Symbol.asyncIterator]().next();
    ac2.abort();
    expect(got.value?.data).toBe(7);
  });

  it("live - a reader that never reads keeps only the newest maxPending events (the oldest are dropped)", async () => {
    const t = fx.sync().topic<number>({ id: "live.bounded" });
    await t.head();
    const ac = new AbortController();
    const it = t.live({ signal: ac.signal })[Symbol.asyncIterator]();
    const n = 1024 + 50;
    await Promise.all(Array.from({ length: n }, (_, i) => t.publish({ data: i + 1 })));
    await new Promise((r) => setTimeout(r, 300));
    const first = await it.next();
    ac.abort();
    // The buffer holds 1,024 events: the 50 oldest were dropped.
    expect(first.value!.streamSequence).toBe(51);
  });
});
