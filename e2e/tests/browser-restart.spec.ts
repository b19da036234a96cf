import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "@playwright/test";
import { chromiumLaunch } from "../lib/browser.js";
import { expectConnections, expectShown, openTabs, test, expect } from "../lib/demo.js";

test("browser restart - a restarted browser shows its history at once and resumes from the cursor", async ({ server }) => {
  // A profile on disk, as a real browser has: IndexedDB survives the restart.
  const profile = mkdtempSync(join(tmpdir(), "tidemark-profile-"));
  try {
    let browser = await chromium.launchPersistentContext(profile, chromiumLaunch);
    let [tab] = await openTabs(browser, server.url, 1);
    await server.publish("acme", "before the restart", 3);
    const before = await server.retainedIds("acme");
    await expectShown(tab!, before);
    await browser.close();
    await expectConnections(server, 0);

    await server.publish("acme", "while the browser was closed", 2);
    browser = await chromium.launchPersistentContext(profile, chromiumLaunch);
    try {
      tab = await browser.newPage();
      await tab.goto(server.url);
      await expectShown(tab, await server.retainedIds("acme"));
      await expect(tab.getByTestId("connection-status")).toHaveText("live");
      await expect(tab.getByTestId("unread-count")).toHaveText("5");
    } finally {
      await browser.close();
    }
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});
