import { describe, expect, it } from "vitest";
import type { ProcessOptions, TopicOptions } from "../../src/index.js";
import { spawnWorker } from "./child.js";
import { collect, consumerInfo, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();
const topicOptions: TopicOptions = { id: "jobs", retention: { maxAgeMs: 3600_000, maxBytes: 64 * 1024 ** 2 } };

describe("process across processes", () => {
  it("process - competing workers in two processes share deliveries and handle each event once", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = { consumer: "shared", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100] }, concurrency: 4 };
    const here: number[] = [];
    const local = await topic.process(options, async (e) => {
      await sleep(5);
      here.push(e.data);
    });
    await using child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, handlerMs: 5 });
    for (let n = 0; n < 300; n++) await topic.publish({ data: n });
    const there = () => child.lines.filter((l) => l.type === "done").map((l) => l.data as number);
    await until(() => here.length + there().length >= 300, 30_000, "300 events handled");
    await sleep(300);
    await local.stop();
    const all = [...here, ...there()].sort((a, b) => a - b);
    expect(all).toEqual([...Array(300).keys()]);
    expect(here.length).toBeGreaterThan(0);
    expect(there().length).toBeGreaterThan(0);
    expect(child.lines.filter((l) => l.type === "start").every((l) => l.attempt === 1)).toBe(true);
  });

  it("process - a worker process killed -9 mid-handler has its event redelivered to a survivor with the next attempt", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = { consumer: "crashy", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100], leaseMs: 1_500 } };
    for (let n = 0; n < 10; n++) await topic.publish({ data: n });
    const child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, hangOn: [7] });
    await child.waitFor((l) => l.type === "start" && l.data === 7);
    const seen = new Map<number, number[]>();
    const survivor = await topic.process(options, (e) => void seen.set(e.data, [...(seen.get(e.data) ?? []), e.attempt]));
    await child.kill("SIGKILL");
    await until(() => seen.has(7) && seen.has(9), 15_000, "the redelivery of 7");
    await sleep(300);
    await survivor.stop();
    // The event that was mid-handler comes back exactly once, as attempt 2.
    expect(seen.get(7)).toEqual([2]);
    const doneThere = child.lines.filter((l) => l.type === "done").map((l) => l.data as number);
    expect(doneThere).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (let n = 0; n < 7; n++) expect(seen.has(n)).toBe(false);
    const info = await consumerInfo(fx, topic, "crashy");
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(10);
    expect(await collect(topic.deadLetters({ consumer: "crashy" }).replay())).toEqual([]);
  });

  it("process - an event whose last attempt dies with its worker is dead-lettered, not dropped", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = { consumer: "last", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [], leaseMs: 1_000 } };
    const receipt = await topic.publish({ data: 1 });
    const child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, hangOn: [1] });
    await child.waitFor((l) => l.type === "start");
    await child.kill("SIGKILL");
    const calls: number[] = [];
    const survivor = await topic.process(options, (e) => void calls.push(e.attempt));
    const letters = () => collect(topic.deadLetters({ consumer: "last" }).replay());
    await until(async () => (await letters()).length === 1, 15_000, "the dead letter");
    await survivor.stop();
    expect(calls).toEqual([]);
    const [letter] = await letters();
    expect(letter).toMatchObject({ attempts: 1, error: { name: "AttemptsExhausted" }, event: { eventId: receipt.eventId, data: 1 } });
  });

  it("process - a process whose Sync is closed under a running worker can still exit", async () => {
    const sync = fx.sync();
    const options: ProcessOptions = { consumer: "orphan", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } };
    await using child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, closeWithoutStop: true });
    await child.waitFor((l) => l.type === "closed");
    const exited = await Promise.race([child.exited.then(() => true), sleep(8_000).then(() => false)]);
    expect(exited).toBe(true);
  });

  it("process - a handler that never returns does not keep the process alive after stop() gave up on it", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    await topic.publish({ data: 1 });
    const options: ProcessOptions = { consumer: "hung", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [] }, stopGraceMs: 200 };
    await using child = await spawnWorker({ url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, hangOn: [1], stopAfter: 1 });
    await child.waitFor((l) => l.type === "stop-timeout" && l.code === "WORKER_STOP_TIMEOUT");
    await child.waitFor((l) => l.type === "closed");
    const exited = await Promise.race([child.exited.then(() => true), sleep(8_000).then(() => false)]);
    expect(exited).toBe(true);
  });
});
