/**
 * A consumer pass takes nats.js's message queue a batch at a time, with the rules of nats.js's
 * own generator: order, flow-control answers run only when the reader takes their batch, the
 * messages before an error, and a closed reader's messages really stopping.
 */
import { describe, expect, it } from "vitest";
import { QueuedIteratorImpl } from "@nats-io/nats-core/internal";
import { jetstream } from "@nats-io/jetstream";
import { MessageBatches } from "../../src/internal.js";
import { monitor } from "@tidemark/testing";
import { collect, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

/** A nats.js queue like a push consumer's: `push` takes messages or control functions. */
function queue() {
  const q = new QueuedIteratorImpl<number>();
  // What nats.js's push consumer does in its own stop(): a marker that ends the iterator.
  const stop = (err?: Error) => q.push((() => QueuedIteratorImpl.prototype.stop.call(q, err)) as unknown as number);
  return { q, stop };
}

describe("message batches", () => {
  it("hands out everything queued since the last call, in order", async () => {
    const { q, stop } = queue();
    const b = new MessageBatches<number>(q);
    for (const n of [1, 2, 3]) q.push(n);
    expect(await b.next()).toEqual([1, 2, 3]);
    const waiting = b.next();
    setTimeout(() => {
      q.push(4);
      q.push(5);
    }, 5);
    expect(await waiting).toEqual([4, 5]);
    q.push(6);
    stop();
    expect(await b.next()).toEqual([6]);
    expect(await b.next()).toBeUndefined();
    expect(await b.next()).toBeUndefined();
  });

  it("runs a queued flow-control answer only when the reader takes its batch", async () => {
    const { q } = queue();
    const b = new MessageBatches<number>(q);
    let answered = 0;
    q.push(1);
    q.push((() => answered++) as unknown as number);
    q.push(2);
    await new Promise((r) => setTimeout(r, 10));
    expect(answered).toBe(0);
    expect(await b.next()).toEqual([1, 2]);
    expect(answered).toBe(1);
  });

  it("hands out the messages before an error, then throws it", async () => {
    const { q, stop } = queue();
    const b = new MessageBatches<number>(q);
    q.push(1);
    stop(new Error("consumer deleted"));
    q.push(2); // after the stop: dropped, as nats.js drops it
    expect(await b.next()).toEqual([1]);
    await expect(b.next()).rejects.toThrow("consumer deleted");
  });

  it("reads any other async iterable through the pump", async () => {
    async function* gen() {
      yield 1;
      yield 2;
    }
    const b = new MessageBatches<number>(gen());
    const got: number[] = [];
    for (let batch = await b.next(); batch !== undefined; batch = await b.next()) got.push(...batch);
    expect(got).toEqual([1, 2]);
  });

  it("a real ordered consumer's messages: all in order, and closed() settles once the reader closes early", async () => {
    const stream = `MB_${Date.now()}`;
    await fx.jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
    // A long timeout and windows of 100: the test server fsyncs, and the machine may be loaded.
    const js = jetstream(fx.nc, { timeout: 30_000 });
    for (let i = 0; i < 1_000; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => js.publish(`${stream}.x`, JSON.stringify(i + j))));
    const read = async (upTo: number) => {
      const messages = await (await js.consumers.getPushConsumer(stream)).consume();
      const b = new MessageBatches(messages);
      const seqs: number[] = [];
      try {
        while (seqs.length < upTo) {
          const batch = await b.next();
          if (batch === undefined) break;
          for (const m of batch) seqs.push(m.seq);
        }
      } finally {
        b.close();
      }
      const closed = await Promise.race([messages.closed().then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
      return { seqs, closed };
    };
    const all = await read(1_000);
    expect(all.closed).toBe(true);
    expect(all.seqs).toEqual(Array.from({ length: 1_000 }, (_, i) => i + 1));
    const early = await read(1);
    expect(early.closed).toBe(true);
  });

  it("reads that end, with or without events, leave no subscription behind on the connection", async () => {
    const sync = fx.sync();
    const t = sync.topic<number>({ id: "batches.subs" });
    // More than a direct read takes: every replay below goes through a consumer.
    await Promise.all(Array.from({ length: 200 }, (_, i) => t.publish({ data: i, tenantId: "busy" })));
    const subs = async () => (await monitor<{ num_subscriptions: number }>(fx.nats, "/subsz")).num_subscriptions;
    await collect(t.replay({ tenantId: "quiet" })); // warm: the Sync's own subscriptions
    const before = await subs();
    for (let i = 0; i < 10; i++) {
      expect(await collect(t.replay({ tenantId: "quiet" }))).toEqual([]); // consumer with nothing pending
      expect((await collect(t.replay())).length).toBe(200);
      for await (const e of t.replay()) if (e.data >= 0) break; // a break after the first event
    }
    let after = await subs();
    const deadline = Date.now() + 5_000;
    while (after > before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await subs();
    }
    expect(after - before).toBe(0);
  });
});
