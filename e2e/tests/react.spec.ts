/**
 * @tidemark/react in Chromium: a small React app in StrictMode (e2e/react-app, served by the demo
 * server under /react/) on the real client, SharedWorker and bridge.
 */
import type { Page } from "@playwright/test";
import { expect, expectConnections, test } from "../lib/demo.js";

const eventIds = (page: Page) => page.getByTestId("event").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.eventId ?? ""));
const feedCounts = (page: Page) => page.evaluate(() => (window as unknown as { feedCounts: { opens: number; closes: number } }).feedCounts);

test("react hooks - history first, then new items; status; two tabs on one socket; StrictMode opens one feed", async ({ context, server }) => {
  const url = `${server.url}/react/index.html`;
  const first = await context.newPage();
  await first.goto(url);
  await expect(first.getByTestId("feed-status")).toHaveAttribute("data-status", "live");
  await expect(first.getByTestId("connection")).toHaveAttribute("data-status", "live");
  for (let i = 1; i <= 3; i++) expect((await server.publish("acme", `event ${i}`)).status).toBe(200);
  const ids = await server.retainedIds("acme");
  await expect.poll(() => eventIds(first)).toEqual(ids);
  await expect(first.getByTestId("live-count")).toHaveText("3");

  // A second tab: the saved history at once, the same socket, and both see what comes next.
  const second = await context.newPage();
  await second.goto(url);
  await expect.poll(() => eventIds(second)).toEqual(ids);
  await expect(second.getByTestId("live-count")).toHaveText("0");
  for (const tab of [first, second]) await expect(tab.getByTestId("tabs")).toHaveText("2");
  await expectConnections(server, 1);
  expect((await server.publish("acme", "event 4")).status).toBe(200);
  const all = await server.retainedIds("acme");
  for (const tab of [first, second]) await expect.poll(() => eventIds(tab)).toEqual(all);

  // StrictMode ran every effect twice; each tab still opened its feed once and closed none.
  for (const tab of [first, second]) expect(await feedCounts(tab)).toEqual({ opens: 1, closes: 0 });
  const metrics = await server.metrics();
  expect(metrics('tidemark_bridge_subscriptions{mode="hub"}')).toBe(1);

  // A reload shows the history from IndexedDB before anything new.
  await second.reload();
  await expect.poll(() => eventIds(second)).toEqual(all);
  await expect(second.getByTestId("feed-status")).toHaveAttribute("data-status", "live");
});

test("react hooks - a tenant switch shows the other tenant's feed, never a mix, on the same connection; a refused tenant is an error", async ({ context, server }) => {
  const page = await context.newPage();
  await page.goto(`${server.url}/react/index.html`);
  await expect(page.getByTestId("feed-status")).toHaveAttribute("data-status", "live");
  expect((await server.publish("acme", "for acme")).status).toBe(200);
  await expect(page.getByTestId("event")).toHaveText(["for acme"]);

  await page.getByTestId("tenant").selectOption("globex");
  await expect(page.getByTestId("feed-status")).toHaveAttribute("data-status", "live");
  await expect(page.getByTestId("event")).toHaveCount(0);
  expect((await server.publish("globex", "for globex")).status).toBe(200);
  expect((await server.publish("acme", "acme again")).status).toBe(200);
  await expect(page.getByTestId("event")).toHaveText(["for globex"]);
  // The acme feed closed (a tick after its last subscriber), the globex one opened once.
  await expect.poll(() => feedCounts(page)).toEqual({ opens: 2, closes: 1 });

  // A tenant the user may not read: status error with the server's code, no items.
  await page.getByTestId("tenant").selectOption("initech");
  await expect(page.getByTestId("feed-status")).toHaveAttribute("data-status", "error");
  await expect(page.getByTestId("feed-status")).toHaveText("error FORBIDDEN");
  await expect(page.getByTestId("event")).toHaveCount(0);

  // Back to acme: its saved history, then what was published while it was closed.
  await page.getByTestId("tenant").selectOption("acme");
  await expect(page.getByTestId("event")).toHaveText(["for acme", "acme again"]);
  await expectConnections(server, 1);
});

test("react hooks - a provider given options makes one client per tab; two tabs share one socket", async ({ context, server }) => {
  const url = `${server.url}/react/index.html?provider=options`;
  const tabs = [await context.newPage(), await context.newPage()];
  for (const tab of tabs) await tab.goto(url);
  for (const tab of tabs) {
    await expect(tab.getByTestId("feed-status")).toHaveAttribute("data-status", "live");
    await expect(tab.getByTestId("tabs")).toHaveText("2");
  }
  await expectConnections(server, 1);
  expect((await server.publish("acme", "hello")).status).toBe(200);
  for (const tab of tabs) await expect(tab.getByTestId("event")).toHaveText(["hello"]);
});
