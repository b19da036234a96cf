import { openTabs, test, expect } from "../lib/demo.js";

test("live - best-effort events reach every tab once, and nothing is kept", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "tick", 3);
  for (const tab of tabs) {
    await expect(tab.getByTestId("live-last")).toHaveText("tick #3");
    await expect(tab.getByTestId("live-last")).toHaveAttribute("data-count", "3");
  }
  // A reload keeps the hub feed's history, but a live feed has none.
  await tabs[0]!.reload();
  await expect(tabs[0]!.getByTestId("connection-status")).toHaveText("live");
  await expect(tabs[0]!.getByTestId("notification")).toHaveCount(3);
  await expect(tabs[0]!.getByTestId("live-last")).toHaveAttribute("data-count", "0");
  await server.publish("acme", "tock");
  for (const tab of tabs) await expect(tab.getByTestId("live-last")).toHaveText("tock");
  await expect(tabs[0]!.getByTestId("live-last")).toHaveAttribute("data-count", "1");
  await expect(tabs[1]!.getByTestId("live-last")).toHaveAttribute("data-count", "4");
});
