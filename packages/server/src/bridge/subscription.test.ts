import { describe, expect, it } from "vitest";
import { BrokerUnavailableError, ErrorCode, SubscriptionMode, type Cursor, type TidemarkEvent } from "@tidemark/shared";
import type { SharedHubSubscribeOptions } from "../hub/registry.js";
import { EventFrames } from "./frames.js";
import { HubIds } from "./hub-ids.js";
import { BridgeMetrics } from "./metrics.js";
import type { ExposedTopic } from "./options.js";
import type { FrameText } from "./socket.js";
import { Subscription, type SubscriptionContext, type SubscriptionSink } from "./subscription.js";

// A fake connection: records frames, and reports a full send buffer from the `pauseAfter`th
// frame until `drain()`.
class FakeSink implements SubscriptionSink {
  readonly id = "c-test";
  readonly frames: { type: string; cursor?: string; event?: { cursor: string } }[] = [];
  readonly ended: { id: string; code: ErrorCode | undefined }[] = [];
  full = false;
  #drained: (() => void) | undefined;
  /** Full once the frame count reaches `pauseAfter` (or each count of a list). */
  constructor(readonly pauseAfter: number | number[] = Infinity) {}
  send(text: string): void {
    this.#record(text);
  }
  sendFrame(frame: FrameText): void {
    this.#record(frame.text);
  }
  #record(text: string): void {
    this.frames.push(JSON.parse(text));
    const at = this.pauseAfter;
    if (Array.isArray(at) ? at.includes(this.frames.length) : this.frames.length === at) this.full = true;
  }
  canSend(): boolean {
    return !this.full;
  }
  writable(): Promise<void> {
    return this.full ? new Promise((resolve) => (this.#drained = resolve)) : Promise.resolve();
  }
  drain(): void {
    this.full = false;
    this.#drained?.();
  }
  endSubscription(sub: Subscription, code: ErrorCode | undefined): void {
    this.ended.push({ id: sub.id, code });
    sub.stop();
  }
}

function event(n: number): TidemarkEvent {
  return { eventId: `e${n}`, cursor: `s${n}` as Cursor, streamSequence: n, data: { n }, publishedAt: Date.now() };
}

// A fake hub: yields the `events` after the subscription's cursor (`s<n>`) in arrays of
// `batchSize` (counting each event and array pulled, and the iterations open), then reports
// caught up and waits.
function fakeHub(events: TidemarkEvent[], pulled = { count: 0, batches: 0, open: 0, started: [] as (string | undefined)[] }, batchSize = 1) {
  return {
    pulled,
    subscribeBatches(options: SharedHubSubscribeOptions = {}): AsyncIterable<TidemarkEvent[]> {
      const after = options.after === undefined ? 0 : Number(options.after.slice(1));
      pulled.started.push(options.after);
      return (async function* () {
        pulled.open++;
        try {
          const rest = events.filter((e) => e.streamSequence > after);
          for (let i = 0; i < rest.length; i += batchSize) {
            const batch = rest.slice(i, i + batchSize);
            pulled.count += batch.length;
            pulled.batches++;
            yield batch;
          }
          options.progress?.onCaughtUp?.(events.at(-1)!.cursor);
          await new Promise(() => undefined);
        } finally {
          pulled.open--;
        }
      })();
    },
  };
}

function setup(hub: ReturnType<typeof fakeHub>, sink: FakeSink, topic: Partial<ExposedTopic["topic"]> = {}, mode: SubscriptionMode = SubscriptionMode.Hub) {
  const frames = new EventFrames();
  const metrics = new BridgeMetrics();
  const hubIds = new HubIds();
  const context: SubscriptionContext = { hubIds, hubOf: () => hub, frames, metrics, log: () => undefined };
  const exposed = { topic: topic as ExposedTopic["topic"], authorize: () => true };
  const sub = new Subscription(sink, context, { id: "s1", topicName: "t", tenantId: "acme", mode, exposed });
  return { sub, context };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
}

/** Lets pending promise callbacks and timers run. */
/** Past the subscription's pause grace (1 s): a buffer still full by then ends the iteration. */
const pastGrace = () => new Promise((r) => setTimeout(r, 1_100));
const settle = () => new Promise((r) => setTimeout(r, 20));

describe("subscription", () => {
  it("subscription - sends the hub's events in order, each once, then caught_up", async () => {
    const sink = new FakeSink();
    const { sub, context } = setup(fakeHub([1, 2, 3, 4, 5].map(event)), sink);
    sub.start(undefined);
    await until(() => sink.frames.length === 6);
    expect(sink.frames.map((f) => f.event?.cursor ?? `${f.type}:${f.cursor}`)).toEqual(["s1", "s2", "s3", "s4", "s5", "caught_up:s5"]);
    expect(context.metrics.eventsDelivered).toBe(5);
    sub.stop();
  });

  it("subscription - pauses on backpressure holding no hub iteration, and resumes from its cursor in order", async () => {
    const sink = new FakeSink(2);
    const hub = fakeHub([1, 2, 3, 4, 5].map(event));
    const { sub } = setup(hub, sink);
    sub.start(undefined);
    await until(() => sink.frames.length === 2);
    await settle();
    // Paused: the iteration (a replay's consumer and what it prefetched, on a real hub) was
    // ended, not left suspended with an event in hand; nothing more is sent.
    expect(sink.frames).toHaveLength(2);
    expect(hub.pulled.open).toBe(0);
    expect(hub.pulled.started).toEqual([undefined]);
    sink.drain();
    await until(() => sink.frames.length === 6);
    expect(sink.frames.map((f) => f.event?.cursor ?? f.type)).toEqual(["s1", "s2", "s3", "s4", "s5", "caught_up"]);
    // Resumed after the last event it sent.
    expect(hub.pulled.started).toEqual([undefined, "s2"]);
    sub.stop();
  });

  it("subscription - an array of events from the hub is still paused before each frame, not per array", async () => {
    const sink = new FakeSink(2);
    const hub = fakeHub([1, 2, 3, 4, 5, 6, 7, 8].map(event), undefined, 5);
    const { sub, context } = setup(hub, sink);
    sub.start(undefined);
    await until(() => sink.frames.length === 2);
    await settle();
    // The buffer filled mid-array: the rest of it is dropped with the iteration, and the next
    // array is not pulled.
    expect(sink.frames).toHaveLength(2);
    expect(hub.pulled.batches).toBe(1);
    expect(hub.pulled.open).toBe(0);
    sink.drain();
    await until(() => sink.frames.length === 9);
    expect(sink.frames.map((f) => f.event?.cursor ?? f.type)).toEqual(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "caught_up"]);
    expect(hub.pulled.started).toEqual([undefined, "s2"]);
    expect(context.metrics.eventsDelivered).toBe(8);
    sub.stop();
  });

  it("subscription - once a socket showed it reads (two quick drains in a row), a buffer that drains within the grace keeps the iteration; one that stays full lets it go", async () => {
    const sink = new FakeSink([2, 4, 6, 8]);
    const hub = fakeHub([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(event));
    const { sub } = setup(hub, sink);
    sub.start(undefined);
    // A new socket has shown nothing: its first two pauses let the iteration go at once (a
    // socket that does not read drains quickly too while the kernel's buffers take bytes).
    for (const frames of [2, 4]) {
      await until(() => sink.frames.length === frames);
      await settle();
      expect(hub.pulled.open).toBe(0);
      sink.drain();
    }
    await until(() => sink.frames.length === 6);
    await settle();
    // Two quick drains in a row: this pause keeps the third iteration.
    expect(hub.pulled.open).toBe(1);
    sink.drain();
    await until(() => sink.frames.length === 8);
    // The same iteration went on; this time the buffer stays full past the grace.
    expect(hub.pulled.started).toEqual([undefined, "s2", "s4"]);
    await pastGrace();
    expect(hub.pulled.open).toBe(0);
    sink.drain();
    await until(() => sink.frames.length === 11);
    expect(sink.frames.map((f) => f.event?.cursor ?? f.type)).toEqual(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "caught_up"]);
    expect(hub.pulled.started).toEqual([undefined, "s2", "s4", "s8"]);
    sub.stop();
  });

  it("subscription - a paused subscription that was at the live edge resumes without a second caught_up", async () => {
    const sink = new FakeSink(4);
    const hub = fakeHub([1, 2].map(event));
    const { sub } = setup(hub, sink, { cursorSequence: (c: string) => Number(c.slice(1)) } as Partial<ExposedTopic["topic"]>);
    sub.start(undefined);
    await until(() => sink.frames.length === 3);
    expect(sink.frames.map((f) => f.event?.cursor ?? f.type)).toEqual(["s1", "s2", "caught_up"]);
    sub.stop();
  });

  it("subscription - a stopped subscription sends nothing more and gives its hub id back", async () => {
    const sink = new FakeSink(1);
    const { sub, context } = setup(fakeHub([1, 2, 3].map(event)), sink);
    sub.start(undefined);
    expect(context.hubIds.size).toBe(1);
    await until(() => sink.frames.length === 1);
    sub.stop();
    sink.drain();
    await settle();
    expect(sink.frames).toHaveLength(1);
    expect(context.hubIds.size).toBe(0);
    expect(sub.stopped).toBe(true);
  });

  it("subscription - live mode drops events while paused and sends the rest in order", async () => {
    const sink = new FakeSink(2);
    const topic = {
      live: () =>
        (async function* () {
          for (const n of [1, 2, 3, 4, 5]) {
            if (n === 5) sink.drain();
            yield event(n);
          }
          await new Promise(() => undefined);
        })(),
    };
    const { sub, context } = setup(fakeHub([]), sink, topic as Partial<ExposedTopic["topic"]>, SubscriptionMode.Live);
    sub.start(undefined);
    await until(() => sink.frames.length === 3);
    expect(sink.frames.map((f) => f.event?.cursor)).toEqual(["s1", "s2", "s5"]);
    expect(context.metrics.liveEventsDropped).toBe(2);
    sub.stop();
  });

  it("subscription - a hub failure that is not a cursor problem ends the subscription with its code", async () => {
    const sink = new FakeSink();
    const failing = {
      pulled: { count: 0, batches: 0, open: 0, started: [] },
      subscribeBatches: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error("boom")) }),
      }),
    };
    const { sub } = setup(failing, sink);
    sub.start(undefined);
    await until(() => sink.ended.length === 1);
    expect(sink.ended[0]).toEqual({ id: "s1", code: ErrorCode.Internal });
    expect(sink.frames).toEqual([]);
  });

  it("subscription - broker trouble the hub already retried for its whole budget ends the subscription at once, without a retry on top", async () => {
    const sink = new FakeSink();
    let opened = 0;
    const spent = {
      pulled: { count: 0, batches: 0, open: 0, started: [] },
      subscribeBatches: () => {
        opened++;
        return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new BrokerUnavailableError("request timed out", { retriedMs: 60_000 })) }) };
      },
    };
    const { sub, context } = setup(spent, sink);
    sub.start(undefined);
    await until(() => sink.ended.length === 1);
    expect(sink.ended[0]).toEqual({ id: "s1", code: ErrorCode.BrokerUnavailable });
    expect(opened).toBe(1);
    expect(context.metrics.subscriptionRetries).toBe(0);
  });

  it("subscription - broker trouble of its own reads is retried from its cursor, counted, and loses nothing", async () => {
    const sink = new FakeSink();
    const events = [1, 2, 3].map(event);
    const hub = fakeHub(events);
    let failures = 2;
    const flaky = {
      pulled: hub.pulled,
      subscribeBatches: (options?: SharedHubSubscribeOptions) =>
        failures-- > 0 ? { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new BrokerUnavailableError("request timed out")) }) } : hub.subscribeBatches(options),
    };
    const { sub, context } = setup(flaky, sink);
    sub.start("s1");
    await until(() => sink.frames.some((f) => f.type === "caught_up"));
    expect(sink.frames.map((f) => f.event?.cursor ?? f.type)).toEqual(["s2", "s3", "caught_up"]);
    expect(hub.pulled.started).toEqual(["s1"]);
    expect(context.metrics.subscriptionRetries).toBe(2);
    expect(sink.ended).toEqual([]);
    sub.stop();
  });
});
