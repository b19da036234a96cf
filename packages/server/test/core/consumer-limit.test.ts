/**
 * A topic's reads are not capped at a thousand consumers. nats-server 2.15 reads a stream's
 * `max_consumers: -1` as its default of 1,000 per stream: a reconnect storm's catch-ups, or hub
 * mode "tenant" with more than 1,000 tenants online, then failed with "maximum consumers limit
 * reached" (seen as `unsubscribed INTERNAL` at 100,000 users, docs/benchmarks/scaleout.md).
 * On 2.9 (the compat run) -1 has no such default, and the reads go through either way.
 */
import { describe, expect, it } from "vitest";
import { collect, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

/** Fills the topic's event stream with `count` idle consumers of other subjects, as a storm's leftovers would. */
async function crowd(stream: string, count: number): Promise<void> {
  // Subjects inside the stream's (2.9 refuses a filter outside them) that no event uses.
  const base = (await fx.jsm.streams.info(stream)).config.subjects[0]!.replace(/>$/, "");
  for (let i = 0; i < count; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, k) => fx.jsm.consumers.add(stream, { filter_subject: `${base}crowd${i + k}`, inactive_threshold: 60e9 })),
    );
  }
}

describe("consumer limit", () => {
  it("consumers - with 1,000 consumers on a topic's stream, replay and follow still open theirs", async () => {
    const s = fx.sync();
    const topic = s.topic<number>({ id: "crowded" });
    await topic.publish({ data: 1, tenantId: "t" });
    const stream = `TMEV_${s.namespace}_crowded`;
    await crowd(stream, 1_000);
    expect((await fx.jsm.streams.info(stream)).state.consumer_count).toBe(1_000);
    expect((await collect(topic.replay({ tenantId: "t" }))).map((e) => e.data)).toEqual([1]);
    // A follow holds an ordered consumer of its own while it runs: the 1,001st on the stream.
    const ac = new AbortController();
    const follow = topic.follow({ tenantId: "t", signal: ac.signal })[Symbol.asyncIterator]();
    const first = await follow.next();
    expect((first.value as { data: number } | undefined)?.data).toBe(1);
    await topic.publish({ data: 2, tenantId: "t" });
    expect(((await follow.next()).value as { data: number } | undefined)?.data).toBe(2);
    expect(s.stats().consumers).toBeGreaterThan(0);
    ac.abort();
  }, 60_000);

  it("consumers - a stream made with max_consumers -1 (Tidemark before this, or another process) is lifted where the server allows", async () => {
    const s = fx.sync();
    const stream = `TMEV_${s.namespace}_older`;
    await s.topic<number>({ id: "older" }).publish({ data: 1 });
    // Back to what older Tidemark made; 2.9 cannot change the setting at all.
    const lowered = await fx.jsm.streams.update(stream, { max_consumers: -1 } as object).then(
      () => true,
      () => false,
    );
    const again = fx.sync({ namespace: s.namespace }).topic<number>({ id: "older" });
    await again.publish({ data: 2 });
    // Where the server took the lowering (2.10+), the second process lifted it back; on 2.9 it
    // was never lowered. Either way the stream has no 1,000-consumer default.
    expect(lowered || fx.nats.version.startsWith("2.9")).toBe(true);
    expect((await fx.jsm.streams.info(stream)).config.max_consumers).toBe(2_147_483_647);
  });
});
