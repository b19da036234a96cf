/**
 * The hub's live fan-out (hub/contract.ts `LiveSink`, docs/architecture.md): a reader handed
 * over with `live` at the live edge gets each later event of its tenant pushed by the follower,
 * in order, once; a sink that cannot take an event is detached with its position and catches up
 * from its cursor; the follower's end reaches its sinks (with its failure, if it failed); an
 * aborted iteration detaches its sink and releases the follower. Both hub modes.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode, isTidemarkError, type Cursor, type TidemarkEvent } from "@tidemark/shared";
import { hubRegistryOf, type LiveSink, type SharedHub, type Topic } from "../../src/index.js";
import { useCoreFixture } from "../core/fixture.js";
import { eventually } from "./fixture.js";

const fx = useCoreFixture();

/** A sink that records what the hub pushed; `fullAfter` events in, it says it cannot take more. */
class Recorder implements LiveSink<number> {
  position = -1;
  cursor: Cursor | undefined;
  readonly data: number[] = [];
  readonly marks: number[] = [];
  readonly detachedWith: unknown[] = [];
  constructor(private readonly topic: Topic<number>, public fullAfter = Infinity) {}
  canTake(): boolean {
    return this.data.length < this.fullAfter;
  }
  take(event: TidemarkEvent<number>): void {
    this.#read(event);
  }
  caughtUp(cursor: Cursor, position: number): void {
    this.cursor = cursor;
    this.position = position;
    this.marks.push(position);
  }
  detached(error?: unknown): void {
    this.detachedWith.push(error);
  }
  /** Reads the hub from `after` until it hands the reader over (the iteration ends there). */
  async follow(hub: SharedHub<number>, after: Cursor | undefined, signal?: AbortSignal): Promise<void> {
    const progress = { onCaughtUp: (c: Cursor) => ((this.cursor = c), (this.position = Math.max(this.position, this.topic.cursorSequence(c)))) };
    for await (const batch of hub.subscribeBatches({ after, progress, live: this, signal })) for (const e of batch) this.#read(e);
  }
  #read(event: TidemarkEvent<number>): void {
    expect(event.streamSequence).toBeGreaterThan(this.position);
    this.data.push(event.data);
    this.position = event.streamSequence;
    this.cursor = event.cursor;
  }
}

const publish = async (topic: Topic<number>, from: number, to: number, tenantId = "a") => {
  for (let n = from; n <= to; n++) await topic.publish({ data: n, tenantId });
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("hub - live fan-out", () => {
  for (const hubMode of ["topic", "tenant"] as const) {
    it(`hub - a reader handed over at the live edge gets every later event from the follower's push, in order, once, and holds the follower (hub mode ${hubMode})`, async () => {
      const sync = fx.sync({ hubs: { hubMode } });
      const topic = sync.topic<number>({ id: "fan" });
      const start = await topic.head();
      await publish(topic, 1, 3);
      const hub = topic.hub({ tenantId: "a" }) as SharedHub<number>;
      const readers = [new Recorder(topic), new Recorder(topic)];
      // The iterations end: from here the follower pushes.
      await Promise.all(readers.map((r) => r.follow(hub, start)));
      expect(hub.subscriberCount).toBe(2);
      await publish(topic, 4, 10);
      await topic.publish({ data: 99, tenantId: "b" });
      for (const r of readers) await eventually(() => r.data.length === 10, 10_000, "the pushed events");
      for (const r of readers) expect(r.data).toEqual(range(1, 10));
      expect(hubRegistryOf(sync).followerCount).toBe(1);
    });

    it(`hub - a sink that cannot take an event is detached with its position, releases the follower, and an iteration from its cursor gets the rest once (hub mode ${hubMode})`, async () => {
      const sync = fx.sync({ hubs: { hubMode } });
      const topic = sync.topic<number>({ id: "full" });
      const hub = topic.hub({ tenantId: "a" }) as SharedHub<number>;
      const slow = new Recorder(topic, 3);
      const other = new Recorder(topic);
      await Promise.all([slow.follow(hub, undefined), other.follow(hub, undefined)]);
      await publish(topic, 1, 8);
      await eventually(() => other.data.length === 8 && slow.detachedWith.length === 1, 10_000, "detached");
      expect(slow.detachedWith).toEqual([undefined]); // full, not failed
      expect(slow.data).toEqual([1, 2, 3]);
      expect(hub.subscriberCount).toBe(1); // the slow sink's membership was released
      await publish(topic, 9, 10);
      slow.fullAfter = Infinity;
      await slow.follow(hub, slow.cursor); // catches up from its cursor, then is handed over again
      await eventually(() => slow.data.length === 10 && other.data.length === 10, 10_000, "the rest");
      expect(slow.data).toEqual(range(1, 10));
      expect(other.data).toEqual(range(1, 10));
      expect(slow.detachedWith).toHaveLength(1);
    });

    it(`hub - aborting a handed-over iteration detaches its sink without a detached() call, and the follower retires (hub mode ${hubMode})`, async () => {
      const sync = fx.sync({ hubs: { hubMode } });
      const topic = sync.topic<number>({ id: "abort" });
      const hub = topic.hub({ tenantId: "a" }) as SharedHub<number>;
      const ac = new AbortController();
      const r = new Recorder(topic);
      await r.follow(hub, undefined, ac.signal);
      await publish(topic, 1, 1);
      await eventually(() => r.data.length === 1, 10_000, "one event");
      ac.abort();
      expect(hub.subscriberCount).toBe(0);
      expect(hubRegistryOf(sync).followerCount).toBe(0);
      await publish(topic, 2, 3);
      await new Promise((res) => setTimeout(res, 200));
      expect(r.data).toEqual([1]);
      expect(r.detachedWith).toEqual([]);
    });

    it(`hub - a re-created topic detaches its sinks with the follower's CursorMismatchError; closing the hubs detaches them with none (hub mode ${hubMode})`, async () => {
      const sync = fx.sync({ hubs: { hubMode, windowPollMs: 100 } });
      const topic = sync.topic<number>({ id: "again" });
      const hub = topic.hub({ tenantId: "a" }) as SharedHub<number>;
      const r = new Recorder(topic);
      await r.follow(hub, undefined);
      await publish(topic, 1, 2);
      await eventually(() => r.data.length === 2, 10_000, "two events");
      await topic.destroy();
      const again = sync.topic<number>({ id: "again" });
      await publish(again, 1, 3);
      await eventually(() => r.detachedWith.length === 1, 10_000, "detached by the follower's failure");
      const err = r.detachedWith[0];
      expect(isTidemarkError(err) && err.code).toBe(ErrorCode.CursorMismatch);

      const fresh = new Recorder(again);
      await fresh.follow(again.hub({ tenantId: "a" }) as SharedHub<number>, undefined);
      hubRegistryOf(sync).close();
      expect(fresh.detachedWith).toEqual([undefined]);
    });
  }

  it("hub - an idle sink learns the hub's newer watermark when other tenants publish (hub mode topic)", async () => {
    const sync = fx.sync({ hubs: { windowPollMs: 100, watermarkIntervalMs: 200 } });
    const topic = sync.topic<number>({ id: "idle" });
    const r = new Recorder(topic);
    await r.follow(topic.hub({ tenantId: "quiet" }) as SharedHub<number>, undefined);
    const before = r.position;
    await publish(topic, 1, 5, "busy");
    const head = topic.cursorSequence(await topic.head());
    await eventually(() => r.position === head, 10_000, "the watermark at the head");
    expect(r.data).toEqual([]);
    expect(r.marks.at(-1)).toBe(head);
    expect(head).toBeGreaterThan(before);
  });
});
