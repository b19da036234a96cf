import { expectShown, openTabs, test, expect } from "../lib/demo.js";

test("tenant-switch - switching the tenant and back: both feeds subscribe again, the ticker is live and the badge says live", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  const status = tab!.getByTestId("connection-status");
  const ticker = tab!.getByTestId("live-last");

  await tab!.getByTestId("tenant-select").selectOption("globex");
  await expect(status).toHaveText("live");
  await server.publish("globex", "on globex");
  await expect(ticker).toHaveText("on globex");

  await tab!.getByTestId("tenant-select").selectOption("acme");
  await expect(status).toHaveText("live");
  await server.publish("acme", "back on acme");
  await expect(ticker).toHaveText("back on acme");
  await expect(ticker).toHaveAttribute("data-count", "1");
  await expectShown(tab!, await server.retainedIds("acme"));
  await expect(status).toHaveText("live");
  const metrics = await server.metrics();
  expect(metrics('tidemark_bridge_subscriptions{mode="live"}')).toBe(1);
  expect(metrics('tidemark_bridge_subscriptions{mode="hub"}')).toBe(1);
});
