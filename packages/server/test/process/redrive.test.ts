import { describe, expect, it } from "vitest";
import { runtimeOf } from "../../src/internal.js";
import { ResourceDriftError, type ProcessOptions } from "../../src/index.js";
import { collect, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();

describe("dead letters", () => {
  it("deadLetters - redrive hands letters back to the consumer only, and removes each once handed back", async () => {
    const topic = fx.topic<string>();
    const receipts = [];
    for (const d of ["x", "y", "z"]) receipts.push(await topic.publish({ data: d, tenantId: "t1" }));
    let broken = true;
    const handled: { data: string; attempt: number; eventId: string; tenantId?: string }[] = [];
    const options: ProcessOptions = { consumer: "mail", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [50] } };
    const worker = await topic.process(options, (e) => {
      if (broken) throw new Error(`smtp down for ${e.data}`);
      handled.push({ data: e.data, attempt: e.attempt, eventId: e.eventId, tenantId: e.tenantId });
    });
    // Another consumer of the same topic, with a letter of its own.
    const other = await topic.process({ consumer: "audit", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } }, (e) => {
      if (e.data === "y") throw new Error("audit refuses y");
    });
    const mail = topic.deadLetters({ consumer: "mail" });
    const audit = topic.deadLetters({ consumer: "audit" });
    await until(async () => (await collect(mail.replay())).length === 3 && (await collect(audit.replay())).length === 1, 10_000, "letters");
    const letters = await collect(mail.replay());
    expect(letters.map((l) => l.event.data)).toEqual(["x", "y", "z"]);
    expect(letters.map((l) => l.event.eventId)).toEqual(receipts.map((r) => r.eventId));
    expect(letters.every((l) => l.attempts === 2 && l.error.message.startsWith("smtp down"))).toBe(true);

    broken = false;
    expect(await mail.redrive()).toBe(3);
    await until(() => handled.length === 3, 10_000, "redriven events");
    expect(handled.map((h) => h.data).sort()).toEqual(["x", "y", "z"]);
    expect(handled.every((h) => h.attempt === 1 && h.tenantId === "t1")).toBe(true);
    expect(handled.map((h) => h.eventId).sort()).toEqual(receipts.map((r) => r.eventId).sort());
    expect(await collect(mail.replay())).toEqual([]);
    // The other consumer's letter stays, and nothing was left behind on the redrive subject.
    expect((await collect(audit.replay())).map((l) => l.event.data)).toEqual(["y"]);
    const rt = runtimeOf(topic);
    await until(async () => (await fx.jsm.streams.info(rt.deadLetterStreamName)).state.messages === 1, 5_000, "redriven copies removed");
    expect(await mail.redrive()).toBe(0);
    await Promise.all([worker.stop(), other.stop()]);
  });

  it("deadLetters - letters redriven while no worker runs wait for one; a redriven event that fails again is dead-lettered once more", async () => {
    const topic = fx.topic<number>();
    await topic.publish({ data: 1 });
    const options: ProcessOptions = { consumer: "retry", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [20] } };
    let calls = 0;
    let worker = await topic.process(options, () => {
      calls++;
      throw new Error("still broken");
    });
    const dl = topic.deadLetters({ consumer: "retry" });
    await until(async () => (await collect(dl.replay())).length === 1, 10_000, "first letter");
    await worker.stop();
    expect(calls).toBe(2);
    expect(await dl.redrive()).toBe(1);
    expect(await collect(dl.replay())).toEqual([]);
    await sleep(200);
    const attempts: number[] = [];
    worker = await topic.process(options, (e) => {
      attempts.push(e.attempt);
      throw new Error("broken again");
    });
    await until(async () => (await collect(dl.replay())).length === 1, 10_000, "second letter");
    await sleep(200);
    await worker.stop();
    expect(attempts).toEqual([1, 2]);
    const [letter] = await collect(dl.replay());
    expect(letter).toMatchObject({ attempts: 2, error: { message: "broken again" }, event: { data: 1, streamSequence: 1 } });
  });

  it("deadLetters - replay of a consumer without letters is empty and stops at once", async () => {
    const topic = fx.topic();
    await topic.publish({ data: 1 });
    expect(await collect(topic.deadLetters({ consumer: "none" }).replay())).toEqual([]);
    const ac = new AbortController();
    ac.abort();
    expect(await collect(topic.deadLetters({ consumer: "none" }).replay({ signal: ac.signal }))).toEqual([]);
  });

  it("deadLetters - while a lowered dead-letter limit is refused, process(), replay() and redrive() fail with ResourceDriftError; once redriven letters are handled it applies", async () => {
    const KiB = 1024;
    const sync = fx.sync();
    const declare = (dlBytes: number, s = sync) =>
      fx.topic<string>({ id: "mail", maxPayloadBytes: 8 * KiB, retention: { maxAgeMs: 3600_000, maxBytes: 1024 * KiB }, deadLetterRetention: { maxBytes: dlBytes } }, s);
    const topic = declare(512 * KiB);
    for (let i = 0; i < 20; i++) await topic.publish({ data: `${i}:${"x".repeat(5 * KiB)}` });
    let broken = true;
    const options: ProcessOptions = { consumer: "mailer", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } };
    const worker = await topic.process(options, () => {
      if (broken) throw new Error("down");
    });
    const dl = topic.deadLetters({ consumer: "mailer" });
    await until(async () => (await collect(dl.replay())).length === 20, 10_000, "20 letters");
    const dlq = runtimeOf(topic).deadLetterStreamName;
    expect((await fx.jsm.streams.info(dlq)).state.bytes).toBeGreaterThan(64 * KiB);

    const lowered = declare(64 * KiB, fx.sync(sync.namespace));
    const drift = async (p: Promise<unknown>) => {
      const err = await p.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ResourceDriftError);
      expect((err as ResourceDriftError).fields).toEqual(["deadLetterRetention.maxBytes"]);
    };
    await drift(lowered.process(options, () => undefined));
    await drift(collect(lowered.deadLetters({ consumer: "mailer" }).replay()));
    await drift(lowered.deadLetters({ consumer: "mailer" }).redrive());
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(512 * KiB);

    // The running declaration redrives; its worker handles the letters and their copies leave.
    broken = false;
    expect(await dl.redrive()).toBe(20);
    await until(async () => (await fx.jsm.streams.info(dlq)).state.messages === 0, 10_000, "an empty dead-letter stream");
    await worker.stop();
    const w = await lowered.process(options, () => undefined);
    expect((await fx.jsm.streams.info(dlq)).config.max_bytes).toBe(64 * KiB);
    await w.stop();
  });
});
