import type { Page } from "@playwright/test";
import { test, expect } from "../lib/demo.js";

/**
 * Counts, after every change of the list or the bell, whether the bell says the number of unread
 * rows the list shows (a MutationObserver's callback runs once the task that changed the page is
 * done, so it sees each render whole). Installed before the page's own script, on every load.
 */
async function watchBadge(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __badge: { checks: number; mismatches: string[] } };
    w.__badge = { checks: 0, mismatches: [] };
    const check = () => {
      const badge = document.querySelector('[data-testid="unread-count"]');
      const list = document.querySelector("#list");
      if (!badge || !list) return;
      const rows = list.querySelectorAll("li.unread[data-testid=notification]").length;
      w.__badge.checks++;
      if (badge.textContent !== String(rows)) w.__badge.mismatches.push(`badge ${badge.textContent}, unread rows ${rows}`);
    };
    new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["class"] });
  });
}

const badgeLog = (page: Page) => page.evaluate(() => (window as unknown as { __badge: { checks: number; mismatches: string[] } }).__badge);

test("badge - the bell equals the unread rows shown after every render: bursts, tenant switches, a refused tenant, reloads, mark all read", async ({ context, server }) => {
  const page = await context.newPage();
  await watchBadge(page);
  await page.goto(server.url);
  await expect(page.getByTestId("connection-status")).toHaveText("live");

  await server.publish("acme", "burst", 60);
  await expect(page.getByTestId("unread-count")).toHaveText("60");
  await server.publish("globex", "other tenant", 5);
  const select = page.getByTestId("tenant-select");
  await select.selectOption("globex");
  await expect(page.getByTestId("unread-count")).toHaveText("5");
  // A tenant ada may not see: the list is empty and so is the bell.
  await select.selectOption("initech");
  await expect(page.getByTestId("unread-count")).toHaveText("0");
  await select.selectOption("acme");
  await expect(page.getByTestId("unread-count")).toHaveText("60");
  const before = await badgeLog(page);
  expect(before.mismatches).toEqual([]);

  await page.reload();
  await expect(page.getByTestId("connection-status")).toHaveText("live");
  await expect(page.getByTestId("unread-count")).toHaveText("60");
  // A burst while the bell is clicked: what came during the click stays unread, and counted.
  const burst = server.publish("acme", "during the click", 20);
  await page.locator("#bell").click();
  await burst;
  await expect.poll(async () => Number(await page.getByTestId("unread-count").textContent()), { timeout: 10_000 }).toBeLessThanOrEqual(20);
  await expect(page.locator("li[data-testid=notification]")).toHaveCount(80);
  const after = await badgeLog(page);
  console.log(`FIGURES badge-vs-list ${JSON.stringify({ checksBeforeReload: before.checks, checksAfterReload: after.checks, mismatches: before.mismatches.length + after.mismatches.length })}`);
  expect(after.mismatches).toEqual([]);
  expect(before.checks + after.checks).toBeGreaterThan(10);
});
