import { describe, it, expect } from "vitest";
import type { TidemarkEvent } from "@tidemark/shared";
import type { SharedHub } from "../../src/index.js";
import { useCoreFixture } from "../core/fixture.js";
import { eventually, firstRetained, pushWindow } from "./fixture.js";

const fx = useCoreFixture();
// About 18 events of 300 bytes fit in 8 KiB.
const small = { id: "small", maxPayloadBytes: 1024, retention: { maxBytes: 8 * 1024 } };

describe("hub watermarks", () => {
  it("hub - an idle tenant's subscriber follows the hub's watermark: retention passing it is no gap", async () => {
    const sync = fx.sync({ hubs: { windowPollMs: 100 } });
    const topic = sync.topic<string>(small);
    const before = await topic.publish({ data: "a0", tenantId: "a" });
    const ac = new AbortController();
    const marks: string[] = [];
    const events: TidemarkEvent<string>[] = [];
    let error: unknown;
    const hub = topic.hub({ tenantId: "a" }) as SharedHub<string>;
    const done = (async () => {
      try {
        for await (const e of hub.subscribe({ signal: ac.signal, progress: { onCaughtUp: (c) => marks.push(c) } })) events.push(e);
      } catch (err) {
        error = err;
      }
    })();
    await eventually(() => marks.length === 1);
    await pushWindow(topic, "b", 60);
    const first = await firstRetained(sync, "small");
    expect(first).toBeGreaterThan(before.streamSequence + 1); // retention passed the subscriber's start
    // Newer watermarks came while idle, each ahead of where retention had got to.
    await eventually(() => topic.cursorSequence(marks.at(-1)!) >= first - 1, 10_000, "a fresh watermark");
    const seqs = marks.map((m) => topic.cursorSequence(m));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    await topic.publish({ data: "a1", tenantId: "a" });
    await topic.publish({ data: "a2", tenantId: "a" });
    await eventually(() => events.length === 2 || error !== undefined, 10_000, "a's new events");
    expect(error).toBeUndefined();
    expect(events.map((e) => e.data)).toEqual(["a1", "a2"]);
    ac.abort();
    await done;
  });
});
