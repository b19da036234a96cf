import { expectShown, openTabs, test, expect } from "../lib/demo.js";

/** The demo's RENDER_INTERVAL_MS (apps/demo/src/list.ts); the check leaves half of it as margin. */
const RENDER_INTERVAL_MS = 100;

test("burst - the list takes a burst in few DOM updates, at most one per render interval, every event once and in order", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  // When the list's rows changed: one MutationObserver callback per task that changed them.
  await tab!.evaluate(() => {
    const w = window as unknown as { listUpdates: number[] };
    w.listUpdates = [];
    new MutationObserver(() => w.listUpdates.push(performance.now())).observe(document.querySelector("#list")!, { childList: true });
  });
  // Three batches at once: the events reach the tab in several of the client's 16 ms batches.
  const token = await server.login();
  const sent = await Promise.all([1, 2, 3].map((k) => server.publishRequest({ tenantId: "acme", text: `burst ${k}`, count: 100 }, { token })));
  expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
  await expectShown(tab!, await server.retainedIds("acme"));
  const updates = await tab!.evaluate(() => (window as unknown as { listUpdates: number[] }).listUpdates);
  expect(updates.length).toBeGreaterThan(0);
  const gaps = updates.slice(1).map((t, i) => t - updates[i]!);
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(RENDER_INTERVAL_MS / 2);
  await expect(tab!.getByTestId("unread-count")).toHaveText("300");
});
