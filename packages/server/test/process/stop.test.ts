import { describe, expect, it } from "vitest";
import { WorkerStopTimeoutError, type ProcessOptions } from "../../src/index.js";
import { consumerInfo, sleep, until, useProcessFixture } from "./fixture.js";

const fx = useProcessFixture();
const delivery = { maxAttempts: 3, backoffMs: [100] };

/** A handler that blocks on a promise the test releases (only on `only`'s sequences, if given). */
function blocker(only?: number[]) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const entered: number[] = [];
  return {
    entered,
    release: () => release(),
    handler: async (e: { streamSequence: number }) => {
      entered.push(e.streamSequence);
      if (!only || only.includes(e.streamSequence)) await gate;
    },
  };
}

/** Settles `p` into a readable state without awaiting it. */
function track(p: Promise<unknown>) {
  const state: { settled: false | "resolved" | "rejected"; error?: unknown } = { settled: false };
  p.then(
    () => (state.settled = "resolved"),
    (error: unknown) => Object.assign(state, { settled: "rejected", error }),
  );
  return state;
}

describe("process - worker.stop()", () => {
  it("process - stop() stays pending while a handler runs, resolves once it ends, and the event is acknowledged", async () => {
    const topic = fx.topic<number>();
    await topic.publish({ data: 1 });
    const b = blocker();
    const w = await topic.process({ consumer: "blocked", start: "earliest", delivery }, b.handler);
    await until(() => b.entered.length === 1, 10_000, "the handler");
    const stop = track(w.stop());
    // Past the 10 s after which stop() used to resolve with the handler still running.
    await sleep(10_500);
    expect(stop.settled).toBe(false);
    b.release();
    await until(() => stop.settled !== false, 10_000, "stop()");
    expect(stop.settled).toBe("resolved");
    const info = await consumerInfo(fx, topic, "blocked");
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(1);
  });

  it("process - stop({ timeoutMs }) rejects with WorkerStopTimeoutError naming the running handler; a later stop() waits for it", async () => {
    const topic = fx.topic<number>();
    const receipt = await topic.publish({ data: 1 });
    const b = blocker();
    const w = await topic.process({ consumer: "deadline", start: "earliest", delivery }, b.handler);
    await until(() => b.entered.length === 1, 10_000, "the handler");
    const t0 = performance.now();
    const err = await w.stop({ timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(performance.now() - t0).toBeGreaterThanOrEqual(280);
    expect(err).toBeInstanceOf(WorkerStopTimeoutError);
    const e = err as WorkerStopTimeoutError;
    expect(e.code).toBe("WORKER_STOP_TIMEOUT");
    expect(e.timeoutMs).toBe(300);
    expect(e.handlers).toHaveLength(1);
    expect(e.handlers[0]).toMatchObject({ consumer: "deadline", eventId: receipt.eventId, streamSequence: 1, attempt: 1 });
    expect(e.handlers[0]!.runningMs).toBeGreaterThanOrEqual(280);
    expect(e.message).toContain(receipt.eventId);
    // The stop is not over: another stop() still waits for the handler, and its ack counts.
    const again = track(w.stop());
    await sleep(300);
    expect(again.settled).toBe(false);
    b.release();
    await until(() => again.settled !== false, 10_000, "the second stop()");
    expect(again.settled).toBe("resolved");
    await until(async () => (await consumerInfo(fx, topic, "deadline")).num_ack_pending === 0, 10_000, "the late ack");
  });

  it("process - stopGraceMs is the deadline of a stop() without one: it rejects, queued events go back at once, the stuck one after its lease", async () => {
    const topic = fx.topic<number>();
    for (let n = 1; n <= 3; n++) await topic.publish({ data: n });
    const opts: ProcessOptions = { consumer: "grace", start: "earliest", delivery: { ...delivery, leaseMs: 4_000 }, stopGraceMs: 300 };
    // Event 1 is quick (so the worker prefetches), event 2 blocks, event 3 waits in the queue.
    const b = blocker([2]);
    const w = await topic.process(opts, b.handler);
    await until(() => b.entered.length === 2, 10_000, "the handlers");
    await sleep(200);
    const err = await w.stop().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkerStopTimeoutError);
    expect((err as WorkerStopTimeoutError).handlers.map((h) => h.streamSequence)).toEqual([2]);
    const t0 = performance.now();
    const seen = new Map<number, { attempt: number; at: number }>();
    const next = await topic.process(opts, (e) => void seen.set(e.streamSequence, { attempt: e.attempt, at: performance.now() - t0 }));
    await until(() => seen.size === 2, 15_000, "both events again");
    await next.stop();
    b.release();
    expect(seen.has(1)).toBe(false);
    expect(seen.get(3)!.at).toBeLessThan(2_000);
    expect(seen.get(2)!.attempt).toBe(2);
    expect(seen.get(2)!.at).toBeGreaterThan(seen.get(3)!.at);
  });

  it("process - sync.close() with a handler that never ends rejects with WorkerStopTimeoutError after its deadline and still closes the connection", async () => {
    const sync = fx.sync();
    const topic = fx.topic<number>({}, sync);
    const receipt = await topic.publish({ data: 1 });
    const opts: ProcessOptions = { consumer: "closing", start: "earliest", delivery: { ...delivery, leaseMs: 1_000 } };
    const b = blocker();
    await topic.process(opts, b.handler);
    await until(() => b.entered.length === 1, 10_000, "the handler");
    const t0 = performance.now();
    const err = await sync.close({ timeoutMs: 400 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(380);
    expect(took).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(WorkerStopTimeoutError);
    expect((err as WorkerStopTimeoutError).handlers).toMatchObject([{ consumer: "closing", eventId: receipt.eventId, attempt: 1 }]);
    expect(sync.connected).toBe(false);
    // The late verdict cannot reach the broker: the event comes back to another worker.
    b.release();
    const other = fx.topic<number>({}, fx.sync(sync.namespace));
    const attempts: number[] = [];
    const w = await other.process(opts, (e) => void attempts.push(e.attempt));
    await until(() => attempts.length === 1, 10_000, "the redelivery");
    await w.stop();
    expect(attempts).toEqual([2]);
  });
});
