import { describe, expect, it } from "vitest";
import type { ProcessOptions, TopicOptions } from "../../src/index.js";
import { runtimeOf } from "../../src/internal.js";
import { spawnWorker, type ChildWorker } from "./child.js";
import { collect, consumerInfo, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();
const topicOptions: TopicOptions = { id: "soak", retention: { maxAgeMs: 3600_000, maxBytes: 256 * 1024 ** 2 } };
const EVENTS = 10_000;
/** Always fails: these must end in the dead-letter stream. */
const poison = (n: number) => n % 500 === 250;

describe("process soak", () => {
  it("process - 10,000 events through two workers with random failures and a crash: each is acknowledged or dead-lettered, none twice", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>(topicOptions, sync);
    const options: ProcessOptions = {
      consumer: "soak",
      start: "earliest",
      delivery: { maxAttempts: 3, backoffMs: [20, 50], leaseMs: 2_000 },
      concurrency: 32,
    };
    for (let n = 0; n < EVENTS; n += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, i) => topic.publish({ data: n + i })));
    }
    const succeeded = new Set<number>();
    const startLocal = () =>
      topic.process(options, (e) => {
        if (poison(e.data) || Math.random() < 0.1) throw new Error(`local failure of ${e.data}`);
        succeeded.add(e.data);
      });
    // Two children: the first gets stuck after 1,000 handlers and is killed -9 with everything
    // it holds; the second and this process then share the rest.
    const childConfig = { url: fx.nats.url, namespace: sync.namespace, topic: topicOptions, options, failRate: 0.1, failWhen: { mod: 500, rem: 250 } };
    const [crashed, replacement] = await Promise.all([
      spawnWorker({ ...childConfig, hangAfter: 1_000 }),
      spawnWorker({ ...childConfig, waitForGo: true }),
    ]);
    const starts = () => crashed.lines.filter((l) => l.type === "start").length;
    await crashed.waitFor((l) => l.type === "start" && starts() >= 1_000 + 32, 30_000);
    const [local] = await Promise.all([startLocal(), replacement.go()]);
    await crashed.kill("SIGKILL");
    const t0 = performance.now();
    const childDone = (c: ChildWorker) => c.lines.filter((l) => l.type === "done").map((l) => l.data as number);

    try {
      await until(
        async () => {
          const info = await consumerInfo(fx, topic, "soak");
          return info.num_pending === 0 && info.num_ack_pending === 0;
        },
        50_000,
        "the consumer to settle",
      );
    } finally {
      await local.stop();
      await replacement.kill("SIGTERM");
    }
    console.log(`soak: settled ${Math.round(performance.now() - t0)} ms after the crash`);
    const info = await consumerInfo(fx, topic, "soak");
    expect(info.ack_floor.stream_seq).toBe(EVENTS);

    const letters = await collect(topic.deadLetters({ consumer: "soak" }).replay());
    const lettered = letters.map((l) => l.event.data);
    console.log(`soak: ${letters.length} dead letters, ${childDone(crashed).length} + ${childDone(replacement).length} handled in the children, ${succeeded.size} here`);
    expect(new Set(lettered).size).toBe(lettered.length);
    for (let n = 0; n < EVENTS; n++) if (poison(n)) expect(lettered).toContain(n);
    const handled = new Set([...succeeded, ...childDone(crashed), ...childDone(replacement)]);
    const missing = [];
    for (let n = 0; n < EVENTS; n++) if (!handled.has(n) && !lettered.includes(n)) missing.push(n);
    expect(missing).toEqual([]);
    expect(letters.every((l) => l.consumer === "soak" && l.attempts >= 1)).toBe(true);
    expect(succeeded.size).toBeGreaterThan(0);
    expect(childDone(replacement).length).toBeGreaterThan(0);

    // The fix ships: every letter is redriven and handled once, and the dead letters are gone.
    const fixed: number[] = [];
    const after = await topic.process(options, (e) => void fixed.push(e.data));
    expect(await topic.deadLetters({ consumer: "soak" }).redrive()).toBe(letters.length);
    try {
      await until(() => fixed.length >= letters.length, 20_000, "the redriven letters");
      await until(async () => (await fx.jsm.streams.info(runtimeOf(topic).deadLetterStreamName)).state.messages === 0, 10_000, "an empty dead-letter stream");
    } finally {
      await after.stop();
    }
    expect(fixed.sort((a, b) => a - b)).toEqual(lettered.sort((a, b) => a - b));
  }, 90_000);
});
