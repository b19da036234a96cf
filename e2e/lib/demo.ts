/** What the tests read from the demo page, and a fixture that starts a fresh demo server per test. */
import { test as base, expect, type BrowserContext, type Page } from "@playwright/test";
import { DemoServer } from "./demo-server.js";

export { expect };

/** A test with its own demo server (fresh data dir, free port). */
export const test = base.extend<{ server: DemoServer }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use, testInfo) => {
    const server = await DemoServer.start({ env: { DEMO_LOG_LEVEL: process.env.DEMO_LOG_LEVEL ?? "warn" } });
    try {
      await use(server);
    } finally {
      if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach("server.log", { body: server.logs });
      await server.dispose();
    }
  },
});

/** Opens `n` tabs on the demo and waits until each shows `live`. */
export async function openTabs(context: BrowserContext, url: string, n: number, query = ""): Promise<Page[]> {
  const pages: Page[] = [];
  for (let i = 0; i < n; i++) {
    const page = await context.newPage();
    await page.goto(url + query);
    pages.push(page);
  }
  for (const page of pages) await expect(page.getByTestId("connection-status")).toHaveText("live");
  return pages;
}

/** Event ids of the notifications on the page, top to bottom in arrival order. */
export async function shownIds(page: Page): Promise<string[]> {
  return page.getByTestId("notification").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.eventId ?? ""));
}

/** Waits until the page shows exactly `ids`, in that order (so nothing missing, nothing twice). */
export async function expectShown(page: Page, ids: readonly string[], timeout = 15_000): Promise<void> {
  await expect.poll(() => shownIds(page), { timeout }).toEqual(ids);
}

/** Waits for the server's own connection count. */
export async function expectConnections(server: DemoServer, n: number, timeout = 15_000): Promise<void> {
  await expect.poll(() => server.connections(), { timeout }).toBe(n);
}

/** Saves a screenshot for the docs (docs/screenshots/NAME.png) when UPDATE_SCREENSHOTS is set. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.UPDATE_SCREENSHOTS) return;
  await page.screenshot({ path: new URL(`../../docs/screenshots/${name}.png`, import.meta.url).pathname });
}
