import { describe, expect, it } from "vitest";
import {
  CursorMismatchError,
  InvalidArgumentError,
  InvalidCursorError,
  ResourceDriftError,
  type ProcessOptions,
} from "../../src/index.js";
import { jetstream } from "@nats-io/jetstream";
import { runtimeOf, claimSubject, encodeDeclaration, type Declaration } from "../../src/internal.js";
import { consumerInfo, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();
const delivery = { maxAttempts: 3, backoffMs: [100, 200] };

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string; fields?: string[] }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { fields?: string[] };
  }
  throw new Error("expected a rejection");
}

describe("process declaration", () => {
  it("process - another declaration of the same consumer gets ResourceDriftError naming the fields, and the consumer is unchanged", async () => {
    const sync = fx.sync();
    const topic = fx.topic({}, sync);
    const declared: ProcessOptions = { consumer: "idx", start: "earliest", delivery, tenantId: "acme" };
    const worker = await topic.process(declared, () => undefined);
    const before = await consumerInfo(fx, topic, "idx");
    // A second process: same namespace, same topic, other settings.
    const other = fx.topic({}, fx.sync(sync.namespace));
    const cases: [Partial<ProcessOptions>, string[]][] = [
      [{ delivery: { ...delivery, maxAttempts: 5 } }, ["delivery.maxAttempts"]],
      [{ delivery: { ...delivery, backoffMs: [100] } }, ["delivery.backoffMs"]],
      [{ delivery: { ...delivery, leaseMs: 5_000 } }, ["delivery.leaseMs"]],
      [{ start: "latest" }, ["start"]],
      [{ tenantId: "other" }, ["tenantId"]],
      [{ tenantId: undefined, start: "latest", delivery: { maxAttempts: 1, backoffMs: [] } }, ["tenantId", "start", "delivery.maxAttempts", "delivery.backoffMs"]],
    ];
    for (const [change, fields] of cases) {
      const err = await rejection(other.process({ ...declared, ...change }, () => undefined));
      expect(err, JSON.stringify(change)).toBeInstanceOf(ResourceDriftError);
      expect(err.code).toBe("RESOURCE_DRIFT");
      expect(err.fields).toEqual(fields);
    }
    const after = await consumerInfo(fx, topic, "idx");
    expect(after.config).toEqual(before.config);
    // The same declaration from the second process is fine.
    const again = await other.process({ ...declared, concurrency: 8 }, () => undefined);
    await Promise.all([worker.stop(), again.stop()]);
  });

  it("process - concurrent first declarations race: with other settings exactly one wins and the consumer has its settings; with the same settings both start", async () => {
    const sync = fx.sync();
    const a = fx.topic({}, sync);
    const b = fx.topic({}, fx.sync(sync.namespace));
    await Promise.all([a.head(), b.head()]);
    for (let round = 0; round < 8; round++) {
      const consumer = `race-${round}`;
      const results = await Promise.allSettled([
        a.process({ consumer, start: "earliest", delivery: { maxAttempts: 2, backoffMs: [] } }, () => undefined),
        b.process({ consumer, start: "earliest", delivery: { maxAttempts: 7, backoffMs: [] } }, () => undefined),
      ]);
      const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [{ i, worker: r.value }] : []));
      const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []));
      expect(won, `round ${round}`).toHaveLength(1);
      expect(lost[0]).toBeInstanceOf(ResourceDriftError);
      const info = await consumerInfo(fx, a, consumer);
      expect(info.config.description).toContain(`"maxAttempts":${won[0]!.i === 0 ? 2 : 7}`);
      await won[0]!.worker.stop();
    }
    for (let round = 0; round < 4; round++) {
      const options: ProcessOptions = { consumer: `same-${round}`, start: "earliest", delivery };
      const workers = await Promise.all([a.process(options, () => undefined), b.process(options, () => undefined)]);
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  it("process - while another process holds the creation claim, other settings get ResourceDriftError and the same settings start", async () => {
    const topic = fx.topic();
    await topic.head();
    const rt = runtimeOf(topic);
    // Another process claimed the creation of "claimed" (maxAttempts 5) and has not added it yet.
    const theirs: Declaration = { tenantId: null, start: "earliest", maxAttempts: 5, backoffMs: [100], leaseMs: 30_000 };
    await jetstream(fx.nc).publish(claimSubject(rt.names, "claimed"), encodeDeclaration(theirs), {
      expect: { lastSubjectSequence: 0 },
    });
    const err = await rejection(topic.process({ consumer: "claimed", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100] } }, () => undefined));
    expect(err).toBeInstanceOf(ResourceDriftError);
    expect(err.fields).toEqual(["delivery.maxAttempts"]);
    expect(await consumerInfo(fx, topic, "claimed").catch(() => "missing")).toBe("missing");
    const w = await topic.process({ consumer: "claimed", start: "earliest", delivery: { maxAttempts: 5, backoffMs: [100] } }, () => undefined);
    expect((await consumerInfo(fx, topic, "claimed")).config.description).toBe(encodeDeclaration(theirs));
    await w.stop();
  });

  it("process - a bad consumer name or option is refused with InvalidArgumentError before touching the broker", async () => {
    const topic = fx.topic();
    for (const consumer of ["a.b", "", "x".repeat(65), "sp ace"]) {
      expect(await rejection(topic.process({ consumer, start: "earliest", delivery }, () => undefined))).toBeInstanceOf(InvalidArgumentError);
    }
    expect(await rejection(topic.process({ consumer: "c", start: "earliest", delivery: { maxAttempts: 0, backoffMs: [] } }, () => undefined))).toBeInstanceOf(InvalidArgumentError);
    expect(() => topic.deadLetters({ consumer: "a>b" })).toThrow(InvalidArgumentError);
    const other = fx.topic({ id: "other" });
    const foreign = await rejection(topic.process({ consumer: "c", start: { after: other.cursorAt(1) }, delivery }, () => undefined));
    expect(foreign).toBeInstanceOf(CursorMismatchError);
    const garbage = await rejection(topic.process({ consumer: "c", start: { after: "not-a-cursor" }, delivery }, () => undefined));
    expect(garbage).toBeInstanceOf(InvalidCursorError);
  });

  it("process - start after a cursor past the head is refused with InvalidCursorError and creates no consumer (the one past-head rule)", async () => {
    const topic = fx.topic<number>();
    await topic.publish({ data: 1 });
    for (const after of [topic.cursorAt(2), topic.cursorAt(2 ** 53 - 1)]) {
      const err = await rejection(topic.process({ consumer: "ahead", start: { after }, delivery }, () => undefined));
      expect(err).toBeInstanceOf(InvalidCursorError);
      expect((err as Error).message).toMatch(/past the head/);
    }
    expect(await consumerInfo(fx, topic, "ahead").catch(() => "missing")).toBe("missing");
    // The head itself is a cursor the topic issued: a worker from it sees the next event.
    const seen: number[] = [];
    const w = await topic.process({ consumer: "ahead", start: { after: await topic.head() }, delivery }, (e) => void seen.push(e.data));
    await topic.publish({ data: 2 });
    await until(() => seen.length === 1, 10_000, "the event after the head");
    await w.stop();
    expect(seen).toEqual([2]);
  });

  it("process - start applies when the consumer is created; a later worker resumes where the consumer is", async () => {
    const topic = fx.topic<number>();
    const r = [];
    for (let n = 0; n < 6; n++) r.push(await topic.publish({ data: n }));
    const seen: number[] = [];
    const opts: ProcessOptions = { consumer: "resume", start: { after: r[2]!.cursor }, delivery };
    let w = await topic.process(opts, (e) => void seen.push(e.data));
    await until(() => seen.length === 3, 10_000, "events after the cursor");
    await w.stop();
    for (let n = 6; n < 9; n++) await topic.publish({ data: n });
    w = await topic.process(opts, (e) => void seen.push(e.data));
    await until(() => seen.length === 6, 10_000, "the new events");
    await w.stop();
    expect(seen).toEqual([3, 4, 5, 6, 7, 8]);

    const latest: number[] = [];
    w = await topic.process({ consumer: "latest", start: "latest", delivery }, (e) => void latest.push(e.data));
    await topic.publish({ data: 100 });
    await until(() => latest.length === 1, 10_000, "the event after start");
    await w.stop();
    expect(latest).toEqual([100]);
  });

  it("process - a tenant worker sees only its tenant; different consumers get independent copies", async () => {
    const topic = fx.topic<string>();
    for (const t of ["a", "b", "a", "c", "a"]) await topic.publish({ data: t, tenantId: t });
    const onlyA: string[] = [];
    const all1: string[] = [];
    const all2: string[] = [];
    const workers = await Promise.all([
      topic.process({ consumer: "tenant-a", start: "earliest", delivery, tenantId: "a" }, (e) => void onlyA.push(e.data)),
      topic.process({ consumer: "one", start: "earliest", delivery }, (e) => void all1.push(e.data)),
      topic.process({ consumer: "two", start: "earliest", delivery }, (e) => void all2.push(e.data)),
    ]);
    await until(() => onlyA.length === 3 && all1.length === 5 && all2.length === 5, 10_000, "all copies");
    await sleep(200);
    await Promise.all(workers.map((w) => w.stop()));
    expect(onlyA).toEqual(["a", "a", "a"]);
    expect(all1).toEqual(["a", "b", "a", "c", "a"]);
    expect(all2).toEqual(all1);
  });
});

describe("process worker lifecycle", () => {
  it("process - concurrency bounds the handlers in flight", async () => {
    const topic = fx.topic<number>();
    for (let n = 0; n < 40; n++) await topic.publish({ data: n });
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    const w = await topic.process({ consumer: "bounded", start: "earliest", delivery, concurrency: 4 }, async () => {
      peak = Math.max(peak, ++inFlight);
      await sleep(30);
      inFlight--;
      done++;
    });
    await until(() => done === 40, 10_000, "40 handlers");
    await w.stop();
    expect(peak).toBe(4);
  });

  it("process - stop() stops fetching and waits for in-flight handlers, which then acknowledge", async () => {
    const topic = fx.topic<number>();
    for (let n = 0; n < 3; n++) await topic.publish({ data: n });
    const started: number[] = [];
    const finished: number[] = [];
    const w = await topic.process({ consumer: "drain", start: "earliest", delivery, concurrency: 3 }, async (e) => {
      started.push(e.data);
      await sleep(600);
      finished.push(e.data);
    });
    await until(() => started.length === 3, 10_000, "three handlers");
    const t0 = performance.now();
    await w.stop();
    expect(performance.now() - t0).toBeGreaterThan(400);
    expect(finished.sort()).toEqual([0, 1, 2]);
    await topic.publish({ data: 3 });
    await sleep(300);
    expect(started).toHaveLength(3);
    const info = await consumerInfo(fx, topic, "drain");
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(1);
  });

  it("process - a long handler keeps its lease with in-progress acks and is not redelivered while it runs", async () => {
    const topic = fx.topic<number>();
    await topic.publish({ data: 1 });
    const opts: ProcessOptions = { consumer: "long", start: "earliest", delivery: { ...delivery, leaseMs: 1_000 } };
    const calls: { worker: string; attempt: number }[] = [];
    const handler = (worker: string) => async (e: { attempt: number }) => {
      calls.push({ worker, attempt: e.attempt });
      await sleep(3_500);
    };
    const a = await topic.process(opts, handler("a"));
    await until(() => calls.length === 1, 10_000, "the first delivery");
    const b = await topic.process(opts, handler("b"));
    await sleep(4_000);
    await Promise.all([a.stop(), b.stop()]);
    expect(calls).toEqual([{ worker: "a", attempt: 1 }]);
    const info = await consumerInfo(fx, topic, "long");
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });
});
