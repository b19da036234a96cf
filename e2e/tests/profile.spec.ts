import { expectConnections, expectShown, openTabs, test, expect } from "../lib/demo.js";

test("profile - one token per profile, and a silent tab is released by the heartbeat", async ({ context, server }) => {
  const tabs = await openTabs(context, server.url, 3, "/?tabTimeoutMs=2000");
  await expectConnections(server, 1);
  expect(await server.tokens()).toBe(1);

  // A network blip reconnects with the token the profile already has.
  await context.setOffline(true);
  await expectConnections(server, 0);
  await context.setOffline(false);
  for (const tab of tabs) await expect(tab.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  expect(await server.tokens()).toBe(1);

  // A tab that hangs or crashes sends no pagehide: the engine drops it when its heartbeat
  // stops. (A tab stopped in the debugger stands in for a crashed one: Page.crash takes down
  // the renderer process, which same-site tabs share here.)
  for (const tab of tabs) await expect(tab.getByTestId("tab-count")).toHaveText("3 tabs share 1 connection");
  const cdp = await context.newCDPSession(tabs[2]!);
  await cdp.send("Debugger.enable");
  await cdp.send("Debugger.pause");
  for (const tab of tabs.slice(0, 2)) await expect(tab.getByTestId("tab-count")).toHaveText("2 tabs share 1 connection", { timeout: 15_000 });
  // Running again, it finds itself forgotten and attaches again.
  await cdp.send("Debugger.resume");
  for (const tab of tabs) await expect(tab.getByTestId("tab-count")).toHaveText("3 tabs share 1 connection", { timeout: 15_000 });
  await tabs[2]!.close();

  // A tab that closes is released at once (pagehide).
  await expect(tabs[0]!.getByTestId("tab-count")).toHaveText("2 tabs share 1 connection", { timeout: 5_000 });
  await tabs[1]!.close();
  await expect(tabs[0]!.getByTestId("tab-count")).toHaveText("1 tab shares 1 connection", { timeout: 5_000 });
  await server.publish("acme", "still here", 2);
  await expectShown(tabs[0]!, await server.retainedIds("acme"));
  await expectConnections(server, 1);
});
