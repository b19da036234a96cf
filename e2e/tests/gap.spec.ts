import { DemoServer } from "../lib/demo-server.js";
import { expectShown, openTabs, test, expect, screenshot } from "../lib/demo.js";

test("gap - the retained window expires while offline: a gap marker, history kept, live again", async ({ context }) => {
  // A retained window of 8 KiB: a few dozen notifications.
  const server = await DemoServer.start({ env: { DEMO_RETENTION_BYTES: String(8 * 1024) } });
  try {
    const [tab] = await openTabs(context, server.url, 1);
    await server.publish("acme", "saved", 3);
    const saved = await server.retainedIds("acme");
    await expectShown(tab!, saved);

    await context.setOffline(true);
    await expect(tab!.getByTestId("connection-status")).toHaveText("offline");
    await server.publish("acme", "pushes the old ones out", 150);
    const retained = await server.retainedIds("acme");
    expect(retained).not.toContain(saved[0]);
    expect(retained.length).toBeLessThan(150);

    await context.setOffline(false);
    await expect(tab!.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
    await expect(tab!.getByTestId("gap-marker")).toHaveCount(1);
    await expectShown(tab!, saved);
    expect((await server.metrics())('tidemark_bridge_resets_total{reason="retention_gap"}')).toBe(1);

    await server.publish("acme", "after the gap");
    const newest = (await server.retainedIds("acme")).at(-1)!;
    await expectShown(tab!, [...saved, newest]);
    // The marker sits between the saved history and what came after it.
    const order = await tab!.locator("#list > li").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.testid));
    expect(order).toEqual(["notification", "notification", "notification", "gap-marker", "notification"]);
    await screenshot(tab!, "gap-marker");

    await tab!.reload();
    await expect(tab!.getByTestId("gap-marker")).toHaveCount(1);
    await expectShown(tab!, [...saved, newest]);
  } finally {
    await server.dispose();
  }
});
