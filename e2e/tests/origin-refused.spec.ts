/**
 * A page whose origin the bridge does not allow (issue 25, item 3: a page served by `vite dev`
 * on another port): every tab shows `failed` with ORIGIN_REFUSED and its reason, the console
 * says so, and the worker does not retry. In Chromium, where an HTTP 403 on the upgrade would
 * reach the page only as close 1006: the bridge accepts and closes with 4403.
 */
import { test as base, expect } from "@playwright/test";
import { DemoServer } from "../lib/demo-server.js";

const test = base.extend<{ server: DemoServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    // The bridge allows another origin than the page's own (http://127.0.0.1:PORT).
    const server = await DemoServer.start({ env: { DEMO_LOG_LEVEL: "error", DEMO_ORIGINS: "http://localhost:5173" } });
    try {
      await use(server);
    } finally {
      await server.dispose();
    }
  },
});

test("origin refused - every tab shows failed with ORIGIN_REFUSED, the console says why, and nothing retries", async ({ context, server }) => {
  const consoleErrors: string[] = [];
  context.on("console", (m) => {
    if (m.type() === "error" && m.text().startsWith("tidemark:")) consoleErrors.push(m.text());
  });
  const pages = [];
  for (let i = 0; i < 2; i++) {
    const page = await context.newPage();
    await page.goto(server.url);
    pages.push(page);
  }
  for (const page of pages) {
    await expect(page.getByTestId("connection-status")).toHaveText("failed");
    await expect(page.getByTestId("connection-status")).toHaveAttribute("title", /^ORIGIN_REFUSED: .*origin not allowed/);
    await expect(page.getByTestId("refused")).toHaveAttribute("data-code", "ORIGIN_REFUSED");
  }
  // Each tab logs its refusal (again when a tab that attaches later makes the worker try once more).
  await expect.poll(() => consoleErrors.length).toBeGreaterThanOrEqual(2);
  for (const text of consoleErrors) expect(text).toMatch(/ORIGIN_REFUSED.*origin not allowed/);
  // The engine gives up after a refusal: one upgrade when the first tab attached, one more when
  // the second did, and none after (the backoff would have made several in this time).
  const refused = (await server.metrics())('tidemark_bridge_rejected_total{reason="origin"}');
  expect(refused).toBeGreaterThanOrEqual(1);
  expect(refused).toBeLessThanOrEqual(2);
  await pages[0]!.waitForTimeout(3_000);
  expect((await server.metrics())('tidemark_bridge_rejected_total{reason="origin"}')).toBe(refused);
  expect(await server.connections()).toBe(0);
});
