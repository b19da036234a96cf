import { describe, expect, it } from "vitest";
import { ResourceDriftError, type ProcessOptions, type TopicOptions } from "../../src/index.js";
import { runtimeOf, claimSubject, durableName, encodeDeclaration, type Declaration } from "../../src/internal.js";
import { jetstream } from "@nats-io/jetstream";
import { spawnWorker } from "./child.js";
import { consumerInfo, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();
const topicOptions: TopicOptions = { id: "jobs", retention: { maxAgeMs: 3600_000, maxBytes: 64 * 1024 ** 2 } };
/** No `leaseMs`: the default lease. */
const delivery = { maxAttempts: 3, backoffMs: [100] };
const NS_PER_MS = 1_000_000;

async function rejection(p: Promise<unknown>): Promise<Error & { fields?: string[] }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { fields?: string[] };
  }
  throw new Error("expected a rejection");
}

describe("process leases", () => {
  it("process - a worker process killed -9 mid-handler: its in-flight events are back at a survivor within 15 s with the default lease", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = { consumer: "killed", start: "earliest", delivery, concurrency: 4 };
    for (let n = 0; n < 6; n++) await topic.publish({ data: n });
    // Every handler of the child hangs: it holds its first four events, mid-handler.
    const child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, hangAfter: 0 });
    await until(() => child.lines.filter((l) => l.type === "start").length === 4, 60_000, "four handlers running in the child");
    const inFlight = child.lines.filter((l) => l.type === "start").map((l) => l.data as number);
    const seen = new Map<number, number[]>();
    const survivor = await topic.process(options, (e) => void seen.set(e.data, [...(seen.get(e.data) ?? []), e.attempt]));
    await until(() => seen.size === 2, 10_000, "the two events the child did not take");
    const killedAt = Date.now();
    await child.kill("SIGKILL");
    await until(() => inFlight.every((n) => seen.has(n)), 15_000, "the killed worker's events at the survivor");
    const back = Date.now() - killedAt;
    await sleep(300);
    await survivor.stop();
    for (const n of inFlight) expect(seen.get(n), `event ${n}`).toEqual([2]);
    expect([...seen.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(back).toBeLessThan(15_000);
    const info = await consumerInfo(fx, topic, "killed");
    expect(info.num_ack_pending).toBe(0);
  });

  it("process - a live handler in another process running far longer than the default lease is never redelivered while it runs", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = { consumer: "slow", start: "earliest", delivery };
    await topic.publish({ data: 0 });
    // The child's handler takes 10 s, more than three default leases.
    await using child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, handlerMs: 10_000 });
    await child.waitFor((l) => l.type === "start" && l.data === 0);
    const seen: { data: number; attempt: number }[] = [];
    const competitor = await topic.process(options, (e) => void seen.push({ data: e.data, attempt: e.attempt }));
    // The competitor is alive and pulling all along: it takes a later event.
    await topic.publish({ data: 1 });
    await until(() => seen.length === 1, 10_000, "the competitor's own event");
    await child.waitFor((l) => l.type === "done" && l.data === 0, 20_000);
    await sleep(300);
    await competitor.stop();
    expect(seen).toEqual([{ data: 1, attempt: 1 }]);
    expect(child.lines.filter((l) => l.type === "start").map((l) => [l.data, l.attempt])).toEqual([[0, 1]]);
    const info = await consumerInfo(fx, topic, "slow");
    expect(info.num_redelivered).toBe(0);
    expect(info.num_ack_pending).toBe(0);
  });

  it("process - a worker without leaseMs adopts an existing consumer's lease (an older release's 30 s) and leaves it unchanged", async () => {
    const topic = fx.topic<number>();
    const first = await topic.process({ consumer: "old", start: "earliest", delivery: { ...delivery, leaseMs: 30_000 } }, () => undefined);
    await first.stop();
    const before = await consumerInfo(fx, topic, "old");
    const worker = await topic.process({ consumer: "old", start: "earliest", delivery }, () => undefined);
    await worker.stop();
    expect((await consumerInfo(fx, topic, "old")).config).toEqual(before.config);
    expect(before.config.ack_wait).toBe(30_000 * NS_PER_MS);
    // A lease that is declared is compared as before.
    const err = await rejection(topic.process({ consumer: "old", start: "earliest", delivery: { ...delivery, leaseMs: 3_000 } }, () => undefined));
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect(err.fields).toEqual(["delivery.leaseMs"]);
  });

  it("process - a worker without leaseMs that finds another's creation claim adds the consumer with the claimed lease", async () => {
    const topic = fx.topic();
    await topic.head();
    const rt = runtimeOf(topic);
    // Another process claimed the creation of "claimed" with a 10 s lease and has not added it yet.
    const theirs: Declaration = { tenantId: null, start: "earliest", maxAttempts: 3, backoffMs: [100], leaseMs: 10_000 };
    await jetstream(fx.nc).publish(claimSubject(rt.names, "claimed"), encodeDeclaration(theirs), { expect: { lastSubjectSequence: 0 } });
    const w = await topic.process({ consumer: "claimed", start: "earliest", delivery }, () => undefined);
    await w.stop();
    const info = await consumerInfo(fx, topic, "claimed");
    expect(info.config.ack_wait).toBe(10_000 * NS_PER_MS);
    expect(info.config.description).toBe(encodeDeclaration(theirs));
    const redrive = await fx.jsm.consumers.info(rt.deadLetterStreamName, durableName(rt.namespace, rt.options.id, "claimed"));
    expect(redrive.config.ack_wait).toBe(10_000 * NS_PER_MS);
  });

  it("process - a worker that adopted a shorter lease renews at that lease: its long handler is not redelivered", async () => {
    const topic = fx.topic<number>();
    const first = await topic.process({ consumer: "short", start: "earliest", delivery: { ...delivery, leaseMs: 1_000 } }, () => undefined);
    await first.stop();
    await topic.publish({ data: 1 });
    const calls: { worker: string; attempt: number }[] = [];
    const handler = (worker: string) => async (e: { attempt: number }) => {
      calls.push({ worker, attempt: e.attempt });
      await sleep(3_500);
    };
    const a = await topic.process({ consumer: "short", start: "earliest", delivery }, handler("a"));
    await until(() => calls.length === 1, 10_000, "the first delivery");
    const b = await topic.process({ consumer: "short", start: "earliest", delivery }, handler("b"));
    await sleep(4_000);
    await Promise.all([a.stop(), b.stop()]);
    expect(calls).toEqual([{ worker: "a", attempt: 1 }]);
    const info = await consumerInfo(fx, topic, "short");
    expect(info.num_redelivered).toBe(0);
  });

  it("process - the documented lease change: with the workers stopped, set the consumer's ack wait; workers declaring the new lease then start", async () => {
    const topic = fx.topic<number>();
    const first = await topic.process({ consumer: "moved", start: "earliest", delivery: { ...delivery, leaseMs: 30_000 } }, () => undefined);
    await first.stop();
    const rt = runtimeOf(topic);
    const durable = durableName(rt.namespace, rt.options.id, "moved");
    for (const stream of [rt.streamName, rt.deadLetterStreamName]) {
      await fx.jsm.consumers.update(stream, durable, { ack_wait: 3_000 * NS_PER_MS });
    }
    const declared = await topic.process({ consumer: "moved", start: "earliest", delivery: { ...delivery, leaseMs: 3_000 } }, () => undefined);
    const adopted = await topic.process({ consumer: "moved", start: "earliest", delivery }, () => undefined);
    await Promise.all([declared.stop(), adopted.stop()]);
    const err = await rejection(topic.process({ consumer: "moved", start: "earliest", delivery: { ...delivery, leaseMs: 30_000 } }, () => undefined));
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect(err.fields).toEqual(["delivery.leaseMs"]);
  });

  it("process - an event-loop stall shorter than two thirds of the lease keeps it; a stall longer than the lease lets the event go to another worker (at-least-once)", async () => {
    // Each in a namespace of its own: one event, data 0, whose handler stalls the child's loop.
    const run = async (consumer: string, leaseMs: number, blockMs: number) => {
      const sync = fx.sync();
      const topic = fx.topic<number>(topicOptions, sync);
      const options: ProcessOptions = { consumer, start: "earliest", delivery: { ...delivery, leaseMs } };
      await using child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, handlerMs: 200, blockOn: { data: 0, ms: blockMs } });
      await topic.publish({ data: 0 });
      // The child has it and stalls (stdout to a pipe is synchronous: the line is out first).
      await child.waitFor((l) => l.type === "start" && l.data === 0);
      const seen: number[] = [];
      const competitor = await topic.process(options, (e) => void seen.push(e.attempt));
      await child.waitFor((l) => l.type === "done" && l.data === 0, 20_000);
      await sleep(leaseMs + 500);
      await competitor.stop();
      // Both verdicts were sent; the event is not pending any more either way.
      expect((await consumerInfo(fx, topic, consumer)).num_ack_pending).toBe(0);
      return { here: seen, there: child.lines.filter((l) => l.type === "start").map((l) => l.attempt) };
    };
    // 1 s stall, 3 s lease renewed every second: kept.
    const kept = await run("stall-short", 3_000, 1_000);
    // 2.5 s stall, 1 s lease: lapsed while the handler ran; the other worker got attempt 2.
    const lapsed = await run("stall-long", 1_000, 2_500);
    expect(kept).toEqual({ here: [], there: [1] });
    expect(lapsed.here).toEqual([2]);
    expect(lapsed.there).toEqual([1]);
  });
});
