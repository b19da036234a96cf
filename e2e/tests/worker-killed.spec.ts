import type { Browser, Page } from "@playwright/test";
import { expectConnections, expectShown, openTabs, shownIds, test, expect } from "../lib/demo.js";

/** Kills the profile's SharedWorker as Chrome does under memory pressure (DevTools' "terminate"). */
async function killSharedWorker(browser: Browser): Promise<void> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: { type: string; targetId: string }[] };
    const workers = targetInfos.filter((t) => t.type === "shared_worker");
    expect(workers).toHaveLength(1);
    await cdp.send("Target.closeTarget", { targetId: workers[0]!.targetId });
  } finally {
    await cdp.detach();
  }
}

const status = (page: Page) => page.getByTestId("connection-status").textContent();

test("worker killed - every tab leaves live at once, a new worker is back within 3 s, and a burst cut in the middle shows once, in order", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "before", 3);
  await Promise.all(tabs.map(async (tab) => expectShown(tab, await server.retainedIds("acme"))));

  // A burst that the kill cuts: part of it reached the worker, maybe not its saved history.
  const burst = server.publish("acme", "burst", 40);
  await expect.poll(async () => (await shownIds(tabs[0]!)).length, { timeout: 10_000 }).toBeGreaterThan(3);
  const killedAt = Date.now();
  await killSharedWorker(context.browser()!);

  // No tab says live while no socket is open: they leave `live` before the server sees the socket go.
  const left = await Promise.all(
    tabs.map(async (tab) => {
      await expect.poll(() => status(tab), { timeout: 2_000, intervals: [20] }).not.toBe("live");
      return Date.now() - killedAt;
    }),
  );
  // Back: a new worker, one socket, every tab live.
  const back = await Promise.all(
    tabs.map(async (tab) => {
      await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 10_000 });
      return Date.now() - killedAt;
    }),
  );
  console.log(`worker killed: tabs left live after ${left.join(", ")} ms, were live again after ${back.join(", ")} ms`);
  for (const ms of left) expect(ms).toBeLessThan(1_000);
  for (const ms of back) expect(ms).toBeLessThan(3_000);
  await expectConnections(server, 1);

  await burst;
  await server.publish("acme", "after");
  const all = await server.retainedIds("acme");
  expect(all).toHaveLength(44);
  for (const tab of tabs) await expectShown(tab, all);
});
