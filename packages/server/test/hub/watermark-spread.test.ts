/**
 * protocol.md, `caught_up`: an idle hub subscription gets a newer watermark when other tenants'
 * events move the topic on, at the latest every `watermarkIntervalMs`; and those refreshes are
 * spread over the second half of the interval, so the first event after a quiet spell does not
 * send every idle subscription its `caught_up` in the same instant (a frame per online user at
 * once), and none comes sooner than half an interval.
 */
import { describe, it, expect } from "vitest";
import { setMaxListeners } from "node:events";
import { HubRegistry } from "../../src/index.js";
import { useCoreFixture } from "../core/fixture.js";
import { eventually } from "./fixture.js";

const fx = useCoreFixture();
const TENANTS = 40;
const INTERVAL_MS = 1_000;

describe.each(["topic", "tenant"] as const)("hub watermark refreshes after a quiet spell (hubMode %s)", (hubMode) => {
  it("hub - the idle subscriptions' newer watermarks come within the interval, spread over its second half, not all at once", async () => {
    const topic = fx.sync().topic<number>({ id: "quiet" });
    await topic.publish({ data: 0, tenantId: "z" });
    const hubs = new HubRegistry({ windowPollMs: 50, watermarkIntervalMs: INTERVAL_MS, hubMode });
    const ac = new AbortController();
    setMaxListeners(TENANTS + 10, ac.signal);
    // When each tenant's subscriber got a watermark past the quiet head.
    const at: (number | undefined)[] = Array.from({ length: TENANTS }, () => undefined);
    let head = 1;
    let caughtUp = 0;
    const subscribers = at.map(async (_, i) => {
      const it = hubs.get(topic, `t${i}`).subscribe({
        signal: ac.signal,
        progress: {
          onCaughtUp: (c) => {
            if (topic.cursorSequence(c) > head && at[i] === undefined) at[i] = Date.now();
            caughtUp++;
          },
        },
      });
      for await (const _ of it) throw new Error(`no event of t${i} was published`);
    });
    await eventually(() => caughtUp >= TENANTS, 10_000, "every subscription caught up");
    // Quiet for longer than the interval: every subscription's last watermark is older than it.
    await new Promise((r) => setTimeout(r, INTERVAL_MS * 1.5));
    const moved = Date.now();
    head = (await topic.publish({ data: 1, tenantId: "z" })).streamSequence - 1;
    await eventually(() => at.every((t) => t !== undefined), 10_000, "a newer watermark for every idle subscription");
    const delays = at.map((t) => t! - moved).sort((a, b) => a - b);
    // At the latest one interval after the move (plus a poll of the window and a loaded machine's
    // slack), and none at the first look (half an interval from the last look that saw the
    // watermark current, which a slow window read can put a little before the move).
    expect(delays.at(-1)!).toBeLessThan(INTERVAL_MS + 1_000);
    expect(delays[0]!).toBeGreaterThanOrEqual(INTERVAL_MS / 4);
    // Spread: uniform over half the interval, 40 refreshes span far more than one poll (less than
    // a quarter interval: p < 1e-10); at once, they span none.
    expect(delays.at(-1)! - delays[0]!).toBeGreaterThan(INTERVAL_MS / 4);
    const perPoll = new Map<number, number>();
    for (const d of delays) perPoll.set(Math.floor(d / 100), (perPoll.get(Math.floor(d / 100)) ?? 0) + 1);
    expect(Math.max(...perPoll.values())).toBeLessThanOrEqual(TENANTS / 2);
    ac.abort();
    await Promise.all(subscribers);
    hubs.close();
  });
});
