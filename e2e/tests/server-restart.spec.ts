import { expectShown, openTabs, test, expect } from "../lib/demo.js";

test("server restart - kill -9 mid-stream, restart: tabs resume with no hole and no duplicate", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "before", 20);

  // A batch of 300 is being published when the server dies; how many made it is up to timing.
  const batch = server.publish("acme", "mid-stream", 300).catch(() => undefined);
  await expect.poll(async () => (await tabs[0]!.getByTestId("notification").count()) > 25, { timeout: 15_000 }).toBe(true);
  await server.kill9();
  await batch;
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).not.toHaveText("live");

  await server.launch();
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  await server.publish("acme", "after", 10);
  const ids = await server.retainedIds("acme");
  expect(ids.length).toBeGreaterThan(30);
  for (const tab of tabs) {
    await expectShown(tab, ids);
    await expect(tab.getByTestId("gap-marker")).toHaveCount(0);
  }
});
