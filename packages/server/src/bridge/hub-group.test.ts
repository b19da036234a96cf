import { describe, expect, it } from "vitest";
import { SubscriptionMode, type Cursor, type TidemarkEvent } from "@tidemark/shared";
import type { SharedHubSubscribeOptions } from "../hub/registry.js";
import { EventFrames } from "./frames.js";
import { HubIds } from "./hub-ids.js";
import { HubGroups } from "./hub-group.js";
import { BridgeMetrics } from "./metrics.js";
import type { ExposedTopic } from "./options.js";
import type { FrameText } from "./socket.js";
import { Subscription, type SubscriptionContext, type SubscriptionSink } from "./subscription.js";

// A connection that records frames; `full` reports a send buffer over the bound until drain().
class Sink implements SubscriptionSink {
  readonly id = "c";
  readonly frames: { type: string; hub?: string; cursor?: string; event?: { streamSequence: number } }[] = [];
  full = false;
  #drained: (() => void) | undefined;
  send(text: string): void {
    this.frames.push(JSON.parse(text));
  }
  sendFrame(frame: FrameText): void {
    this.frames.push(JSON.parse(frame.text));
  }
  canSend(): boolean {
    return !this.full;
  }
  writable(): Promise<void> {
    return this.full ? new Promise((r) => (this.#drained = r)) : Promise.resolve();
  }
  drain(): void {
    this.full = false;
    this.#drained?.();
  }
  endSubscription(): void {}
  get events(): number[] {
    return this.frames.filter((f) => f.type === "event").map((f) => f.event!.streamSequence);
  }
}

const event = (n: number): TidemarkEvent => ({ eventId: `e${n}`, cursor: `s${n}` as Cursor, streamSequence: n, data: { n }, publishedAt: Date.now() });

// A live hub: every iteration yields the events after its cursor, reports caught up, and waits
// for more; `pulled` counts the events handed out over all iterations.
function liveHub(options: { holdCaughtUp?: (iteration: number) => Promise<void> | undefined } = {}) {
  const hold = options.holdCaughtUp;
  const events: TidemarkEvent[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const hub = {
    pulled: 0,
    iterations: 0,
    push(n: number) {
      events.push(event(n));
      wake();
    },
    subscribeBatches(opts: SharedHubSubscribeOptions = {}): AsyncIterable<TidemarkEvent[]> {
      const cancel = opts.cancel!;
      return (async function* () {
        const iteration = ++hub.iterations;
        cancel.watch({ poke: wake });
        let pos = opts.after ? Number(opts.after.slice(1)) : (events.at(-1)?.streamSequence ?? 0);
        let caughtUp = false;
        while (!cancel.aborted) {
          const next = events.find((e) => e.streamSequence > pos);
          if (next) {
            pos = next.streamSequence;
            hub.pulled++;
            yield [next];
            continue;
          }
          if (!caughtUp) {
            caughtUp = true;
            await hold?.(iteration);
            opts.progress?.onCaughtUp?.(`s${pos}` as Cursor);
            continue;
          }
          await new Promise<void>((r) => {
            const w = () => (waiters.delete(w), r());
            waiters.add(w);
          });
        }
      })();
    },
  };
  return hub;
}

function setup(hub: ReturnType<typeof liveHub>) {
  const frames = new EventFrames();
  const metrics = new BridgeMetrics();
  const hubIds = new HubIds();
  const context: SubscriptionContext = {
    hubIds,
    hubOf: () => hub,
    frames,
    groups: new HubGroups({ hubOf: () => hub, hubIds, frames, metrics }),
    metrics,
    log: () => undefined,
  };
  const topic = { cursorSequence: (c: string) => Number(c.slice(1)) } as unknown as ExposedTopic["topic"];
  const open = (sink: Sink, id: string, cursor?: string) => {
    const sub = new Subscription(sink, context, { id, topicName: "t", tenantId: "acme", mode: SubscriptionMode.Hub, exposed: { topic, authorize: () => true } });
    sub.start(cursor);
    return sub;
  };
  return { context, open };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
}
const settle = () => new Promise((r) => setTimeout(r, 20));

describe("hub groups", () => {
  it("subscription - caught-up subscriptions of one hub get each live event through ONE hub iteration", async () => {
    const hub = liveHub();
    [1, 2].forEach((n) => hub.push(n));
    const { context, open } = setup(hub);
    const sinks = [new Sink(), new Sink(), new Sink()];
    const subs = sinks.map((s, i) => open(s, `s${i}`, i === 0 ? "s0" : undefined));
    await until(() => sinks.every((s) => s.frames.some((f) => f.type === "caught_up")));
    await settle();
    const before = hub.pulled;
    for (let n = 3; n <= 7; n++) hub.push(n);
    await until(() => sinks.every((s) => s.events.includes(7)));
    expect(sinks[0]!.events).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sinks[1]!.events).toEqual([3, 4, 5, 6, 7]);
    expect(sinks[2]!.events).toEqual([3, 4, 5, 6, 7]);
    // five events, one iteration reading them: not one per subscription
    expect(hub.pulled - before).toBe(5);
    expect(context.groups.size).toBe(1);
    expect(context.metrics.eventsDelivered).toBe(2 + 3 * 5);
    // the lag histogram counts each delivery too, those the group sent for all at once included
    expect(context.metrics.render({ hubFollowers: 0, hubFeeds: 0, hubs: 0, draining: false, unauthenticated: 0, jetstreamConsumers: 0 })).toMatch(/^tidemark_bridge_delivery_lag_seconds_count 17$/m);
    subs.forEach((s) => s.stop());
    expect(context.groups.size).toBe(0);
  });

  it("subscription - a full buffer takes one subscription out of its group; it gets the rest in order, once, and the others go on", async () => {
    const hub = liveHub();
    const { open } = setup(hub);
    const slow = new Sink();
    const fast = new Sink();
    const subs = [open(slow, "slow"), open(fast, "fast")];
    await until(() => [slow, fast].every((s) => s.frames.some((f) => f.type === "caught_up")));
    await settle();
    hub.push(1);
    await until(() => slow.events.length === 1 && fast.events.length === 1);
    slow.full = true;
    for (let n = 2; n <= 6; n++) hub.push(n);
    await until(() => fast.events.length === 6);
    await settle();
    expect(slow.events).toEqual([1]);
    slow.drain();
    await until(() => slow.events.length === 6);
    hub.push(7);
    await until(() => slow.events.length === 7 && fast.events.length === 7);
    await settle();
    expect(slow.events).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(fast.events).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // no replay happened: going on after the pause is no news, as before
    expect(slow.frames.filter((f) => f.type === "caught_up")).toHaveLength(1);
    subs.forEach((s) => s.stop());
  });

  it("subscription - a group whose first member left before it was ready frames events with the hub id its members were given", async () => {
    // The group's own iteration (the hub's second) reaches the live edge only when released.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const hub = liveHub({ holdCaughtUp: (iteration) => (iteration === 2 ? held : undefined) });
    const { context, open } = setup(hub);
    const first = new Sink();
    const subA = open(first, "a");
    await until(() => first.frames.some((f) => f.type === "caught_up"));
    await until(() => hub.iterations === 2);
    // The socket goes before the group is ready: its hub id is released with it.
    subA.stop();
    const second = new Sink();
    const subB = open(second, "b");
    await until(() => second.frames.some((f) => f.type === "caught_up"));
    release();
    await settle();
    hub.push(1);
    await until(() => second.events.length === 1);
    const subscribedHub = subB.hubId;
    expect(second.frames.filter((f) => f.type === "event").map((f) => f.hub)).toEqual([subscribedHub]);
    subB.stop();
    expect(context.groups.size).toBe(0);
  });

  it("subscription - a stopped member gets nothing more; the group ends with its last member", async () => {
    const hub = liveHub();
    const { context, open } = setup(hub);
    const a = new Sink();
    const b = new Sink();
    const subA = open(a, "a");
    const subB = open(b, "b");
    await until(() => [a, b].every((s) => s.frames.some((f) => f.type === "caught_up")));
    await settle();
    subA.stop();
    hub.push(1);
    await until(() => b.events.length === 1);
    await settle();
    expect(a.events).toEqual([]);
    subB.stop();
    await settle();
    expect(context.groups.size).toBe(0);
    const iterations = hub.iterations;
    hub.push(2);
    await settle();
    expect(hub.iterations).toBe(iterations);
    expect(b.events).toEqual([1]);
  });
});

