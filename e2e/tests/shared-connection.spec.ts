import { expectConnections, expectShown, openTabs, test, expect, screenshot } from "../lib/demo.js";

test("shared connection - three tabs make one WebSocket and each shows every event once", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 3);
  await expectConnections(server, 1);
  for (const tab of tabs) await expect(tab.getByTestId("tab-count")).toHaveText("3 tabs share 1 connection");
  for (const tab of tabs) await expect(tab.getByTestId("transport")).toHaveText("shared-worker");

  // One server subscription per feed, however many tabs show it (the page has a hub feed and
  // a live ticker).
  const metrics = await server.metrics();
  expect(metrics('tidemark_bridge_subscriptions{mode="hub"}')).toBe(1);
  expect(metrics('tidemark_bridge_subscriptions{mode="live"}')).toBe(1);

  for (let i = 1; i <= 5; i++) expect((await server.publish("acme", `event ${i}`)).status).toBe(200);
  const ids = await server.retainedIds("acme");
  expect(ids).toHaveLength(5);
  for (const tab of tabs) {
    await expectShown(tab, ids);
    await expect(tab.getByTestId("unread-count")).toHaveText("5");
  }
  // The server sent each event once per feed (hub and live), not once per tab.
  await expect.poll(async () => (await server.metrics())("tidemark_bridge_events_delivered_total")).toBe(10);
  // The sound plays once per profile, not once per tab.
  await expect.poll(async () => {
    const counts = await Promise.all(tabs.map((t) => t.getByTestId("effect-count").textContent()));
    return counts.reduce((sum, c) => sum + Number(c), 0);
  }).toBe(5);

  // Publishing from the page's own form reaches every tab too.
  await tabs[0]!.getByTestId("publish-input").fill("from the form");
  await tabs[0]!.getByTestId("publish-button").click();
  for (const tab of tabs) await expect(tab.getByTestId("notification").last()).toHaveText(/from the form/);
  await screenshot(tabs[0]!, "notification-centre");
  // Reading in one tab clears the bell everywhere.
  await tabs[1]!.getByTestId("bell").click();
  for (const tab of tabs) await expect(tab.getByTestId("unread-count")).toHaveText("0");
  await expectConnections(server, 1);
});
