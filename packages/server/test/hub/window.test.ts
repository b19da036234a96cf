/**
 * The hub's window look (hub/window.ts) reads a topic of a Sync through its runtime handle
 * (core/runtime.ts), a spy or proxy of one included; any other Topic implementation through its
 * public `head()`, with no first retained sequence.
 */
import { describe, expect, it } from "vitest";
import type { Topic } from "../../src/index.js";
import { readWindow } from "../../src/internal.js";
import { useCoreFixture } from "../core/fixture.js";
import { firstRetained, pushWindow, spyTopic } from "./fixture.js";

const fx = useCoreFixture();
const small = { id: "win", maxPayloadBytes: 1024, retention: { maxBytes: 8 * 1024 } };

describe("hub window", () => {
  it("hub - the window of a Sync's topic, and of a spy of it, names the first retained sequence", async () => {
    const sync = fx.sync();
    const topic = sync.topic<string>(small);
    await pushWindow(topic, "b", 60, 0);
    const first = await firstRetained(sync, "win");
    expect(first).toBeGreaterThan(1); // retention moved the front
    const head = topic.cursorSequence(await topic.head());
    for (const t of [topic, spyTopic(topic)] as Topic<unknown>[]) {
      const window = await readWindow(t);
      expect(window).toMatchObject({ head, first });
      expect(window!.incarnation).toBeDefined();
      expect(window!.filling).toBe(true); // more than half the byte limit is held
    }
  });

  it("hub - the window of another Topic implementation comes from head(), with no first sequence", async () => {
    const sync = fx.sync();
    const real = sync.topic<string>(small);
    await real.publish({ data: "x", tenantId: "a" });
    // Only the public Topic interface (no runtime behind it): an object, not a proxy of the topic.
    const other = { id: real.id, head: () => real.head(), cursorSequence: (c: string) => real.cursorSequence(c) } as unknown as Topic<unknown>;
    const window = await readWindow(other);
    expect(window).toMatchObject({ head: real.cursorSequence(await real.head()), first: undefined, filling: false });
  });

});
