import { describe, expect, it } from "vitest";
import type { ProcessEvent } from "../../src/index.js";
import { jetstream } from "@nats-io/jetstream";
import { runtimeOf } from "../../src/internal.js";
import { collect, consumerInfo, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();

describe("process retries", () => {
  it("process - success acknowledges every event once, in order, at attempt 1", async () => {
    const topic = fx.topic<{ n: number }>();
    for (let n = 0; n < 20; n++) await topic.publish({ data: { n } });
    const seen: ProcessEvent<{ n: number }>[] = [];
    const worker = await topic.process(
      { consumer: "ok", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100] } },
      (e) => void seen.push(e),
    );
    await until(() => seen.length === 20, 10_000, "20 events");
    await worker.stop();
    expect(seen.map((e) => e.data.n)).toEqual([...Array(20).keys()]);
    expect(seen.every((e) => e.attempt === 1)).toBe(true);
    const info = await consumerInfo(fx, topic, "ok");
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(20);
  });

  it("process - retries on the backoff schedule, last step repeating, and dead-letters after exactly maxAttempts", async () => {
    const topic = fx.topic<{ id: string }>();
    const receipt = await topic.publish({ data: { id: "a" }, tenantId: "acme" });
    const attempts: { attempt: number; at: number }[] = [];
    const worker = await topic.process(
      { consumer: "flaky", start: "earliest", delivery: { maxAttempts: 4, backoffMs: [300, 700] } },
      (e) => {
        attempts.push({ attempt: e.attempt, at: performance.now() });
        throw new TypeError(`nope ${e.attempt}`);
      },
    );
    const letters = () => collect(topic.deadLetters({ consumer: "flaky" }).replay());
    await until(async () => (await letters()).length === 1, 10_000, "a dead letter");
    await sleep(1_000); // a fifth attempt would come 700 ms after the fourth
    await worker.stop();

    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    const gaps = attempts.slice(1).map((a, i) => a.at - (attempts[i] as { at: number }).at);
    const want = [300, 700, 700];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual((want[i] as number) - 20);
      expect(gap).toBeLessThan((want[i] as number) + 400);
    });

    const [letter] = await letters();
    expect(letter).toMatchObject({
      consumer: "flaky",
      attempts: 4,
      error: { name: "TypeError", message: "nope 4" },
      event: {
        eventId: receipt.eventId,
        cursor: receipt.cursor,
        streamSequence: receipt.streamSequence,
        tenantId: "acme",
        data: { id: "a" },
      },
    });
    expect(letter?.deadLetteredAt).toBeGreaterThan(Date.now() - 60_000);
    const info = await consumerInfo(fx, topic, "flaky");
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });

  it("process - a handler that throws a non-Error value is dead-lettered with that value", async () => {
    const topic = fx.topic<number>();
    const thrown: unknown[] = ["boom", { code: 7 }, undefined, 42, Object.assign(Object.create(null) as object, { message: "bare" })];
    for (let i = 0; i < thrown.length; i++) await topic.publish({ data: i });
    const worker = await topic.process(
      { consumer: "weird", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } },
      (e) => {
        throw thrown[e.data];
      },
    );
    const letters = () => collect(topic.deadLetters({ consumer: "weird" }).replay());
    await until(async () => (await letters()).length === thrown.length, 10_000, "five dead letters");
    await worker.stop();
    const byData = new Map((await letters()).map((l) => [l.event.data, l]));
    expect(byData.get(0)?.error).toEqual({ name: "NonError", message: "boom" });
    expect(byData.get(1)?.error).toEqual({ name: "NonError", message: '{"code":7}' });
    expect(byData.get(2)?.error).toEqual({ name: "NonError", message: "undefined" });
    expect(byData.get(3)?.error).toEqual({ name: "NonError", message: "42" });
    expect(byData.get(4)?.error).toEqual({ name: "NonError", message: "bare" });
    expect([...byData.values()].every((l) => l.attempts === 1)).toBe(true);
  });

  it("process - a message published around Tidemark (not an envelope) is dead-lettered raw instead of stalling the consumer", async () => {
    const topic = fx.topic<string>();
    await topic.head(); // provisions
    await jetstream(fx.nc).publish(runtimeOf(topic).subjectFor(undefined), "not json");
    await topic.publish({ data: "fine" });
    const seen: string[] = [];
    const worker = await topic.process({ consumer: "raw", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [] } }, (e) => void seen.push(e.data));
    const letters = () => collect(topic.deadLetters({ consumer: "raw" }).replay());
    await until(async () => seen.length === 1 && (await letters()).length === 1, 10_000, "the letter and the event");
    await worker.stop();
    expect(seen).toEqual(["fine"]);
    const [letter] = await letters();
    expect(letter).toMatchObject({ attempts: 1, error: { name: "InvalidArgumentError" }, event: { streamSequence: 1, data: "not json" } });
  });

  it("process - a letter always fits the dead-letter stream: largest event, longest tenant, an error that JSON-escapes to many bytes", async () => {
    const maxPayloadBytes = 8 * 1024;
    const topic = fx.topic<string>({ maxPayloadBytes, retention: { maxAgeMs: 3600_000, maxBytes: 1024 ** 2 } });
    const tenantId = "é".repeat(128); // 256 UTF-8 bytes, encoded in the subject
    // The largest data the envelope allows.
    let size = maxPayloadBytes;
    for (;;) {
      try {
        await topic.publish({ data: "x".repeat(size), tenantId });
        break;
      } catch {
        size -= 16;
      }
    }
    const worker = await topic.process({ consumer: "big", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } }, () => {
      const e = new Error("\u0001".repeat(50_000));
      e.name = "\u0002".repeat(5_000);
      throw e;
    });
    const letters = () => collect(topic.deadLetters({ consumer: "big" }).replay());
    await until(async () => (await letters()).length === 1, 10_000, "the letter");
    await worker.stop();
    const [letter] = await letters();
    expect(letter?.event.data).toHaveLength(size);
    expect(letter?.event.tenantId).toBe(tenantId);
    expect(letter?.error.message.startsWith("\u0001")).toBe(true);
  });
});
