import { expectShown, openTabs, test, expect } from "../lib/demo.js";

test("server restart - kill -9 mid-stream, restart: tabs resume with no hole and no duplicate", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "before", 10);

  // A publisher keeps going, one event at a time, until the server dies under it.
  let published = 0;
  let stopped = false;
  const publisher = (async () => {
    while (!stopped) {
      try {
        if ((await server.publish("acme", `stream ${published + 1}`)).status !== 200) break;
        published++;
      } catch {
        break;
      }
    }
  })();
  await expect.poll(async () => tabs[0]!.getByTestId("notification").count(), { timeout: 15_000 }).toBeGreaterThan(30);
  await server.kill9();
  await publisher;
  stopped = true;
  expect(published).toBeGreaterThan(20);
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).not.toHaveText("live");

  await server.launch();
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  await server.publish("acme", "after", 10);
  const ids = await server.retainedIds("acme");
  expect(ids.length).toBeGreaterThanOrEqual(10 + published + 10);
  for (const tab of tabs) {
    await expectShown(tab, ids);
    await expect(tab.getByTestId("gap-marker")).toHaveCount(0);
  }
});

test("server restart - a graceful stop drains the clients, which resume from their cursor", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "before", 5);
  await expectShown(tabs[0]!, await server.retainedIds("acme"));
  await server.stop();
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).not.toHaveText("live");
  await server.launch();
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  await server.publish("acme", "after", 5);
  const ids = await server.retainedIds("acme");
  expect(ids).toHaveLength(10);
  for (const tab of tabs) await expectShown(tab, ids);
});
