import { expectConnections, expectShown, openTabs, test, expect } from "../lib/demo.js";

test("offline - the network goes away and back: status follows, missed events arrive once", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 2);
  await server.publish("acme", "online");
  await context.setOffline(true);
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("offline");
  await expectConnections(server, 0);
  await server.publish("acme", "while offline", 3);

  await context.setOffline(false);
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  const ids = await server.retainedIds("acme");
  expect(ids).toHaveLength(4);
  for (const tab of tabs) await expectShown(tab, ids);
  await expectConnections(server, 1);
});
