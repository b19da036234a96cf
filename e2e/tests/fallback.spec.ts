import { expectConnections, expectShown, openTabs, test, expect } from "../lib/demo.js";

test("fallback - without SharedWorker a leader tab holds the one socket for all", async ({ context, server }) => {
  await context.addInitScript(() => {
    // As in a browser without SharedWorker (Chrome on Android, older Safari).
    delete (window as { SharedWorker?: unknown }).SharedWorker;
  });
  const tabs = await openTabs(context, server.url, 3);
  await expectConnections(server, 1);
  const transports = await Promise.all(tabs.map((t) => t.getByTestId("transport").textContent()));
  expect([...transports].sort()).toEqual(["follower", "follower", "leader"]);
  for (const tab of tabs) await expect(tab.getByTestId("tab-count")).toHaveText("3 tabs share 1 connection");

  await server.publish("acme", "to all", 3);
  let ids = await server.retainedIds("acme");
  for (const tab of tabs) await expectShown(tab, ids);

  // The leader goes away: another tab takes over, still one socket, nothing lost or doubled.
  const leader = tabs[transports.indexOf("leader")]!;
  const rest = tabs.filter((t) => t !== leader);
  await leader.close();
  await server.publish("acme", "after the leader left", 2);
  ids = await server.retainedIds("acme");
  for (const tab of rest) await expectShown(tab, ids);
  await expectConnections(server, 1);
  const after = await Promise.all(rest.map((t) => t.getByTestId("transport").textContent()));
  expect(after.sort()).toEqual(["follower", "leader"]);
});
