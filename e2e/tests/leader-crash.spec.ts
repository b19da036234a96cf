import { expectConnections, expectShown, openTabs, shownIds, test, expect } from "../lib/demo.js";

test("leader crash - without SharedWorker, the leader tab's renderer crashes mid-burst: the others leave live at once, one takes over within 3 s, the burst shows once, in order", async ({ context, server }) => {
  await context.addInitScript(() => {
    // As in a browser without SharedWorker (Chrome on Android before 2025, older Safari).
    delete (window as { SharedWorker?: unknown }).SharedWorker;
    // Every status the page draws, with the time (an observer sees each change, not samples).
    const log: [number, string][] = [];
    (window as unknown as { statusLog: typeof log }).statusLog = log;
    new MutationObserver(() => {
      const st = document.querySelector('[data-testid="connection-status"]')?.textContent ?? "";
      if (log.at(-1)?.[1] !== st) log.push([Date.now(), st]);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  const tabs = await openTabs(context, server.url, 3);
  await expectConnections(server, 1);
  const transports = await Promise.all(tabs.map((t) => t.getByTestId("transport").textContent()));
  const leader = tabs[transports.indexOf("leader")]!;
  const rest = tabs.filter((t) => t !== leader);
  await server.publish("acme", "before", 3);
  await Promise.all(tabs.map(async (tab) => expectShown(tab, await server.retainedIds("acme"))));

  // A burst that the crash cuts: part of it reached the leader, maybe not the others.
  const burst = server.publish("acme", "burst", 40);
  await expect.poll(async () => (await shownIds(rest[0]!)).length, { timeout: 10_000 }).toBeGreaterThan(3);
  const cdp = await context.newCDPSession(leader);
  const crashedAt = Date.now();
  // Kills the tab's renderer process, as an out-of-memory kill or a renderer bug does; no answer comes.
  void cdp.send("Page.crash").catch(() => undefined);
  await expect.poll(() => leader.evaluate(() => 1).then(() => "alive", () => "crashed")).toBe("crashed");

  // The other tabs are in renderers of their own and stay up. Each one's status as drawn (every
  // change, recorded in the page): when it left live after the crash, and when it was live again.
  const statusLog = (tab: (typeof rest)[number]) => tab.evaluate(() => (window as unknown as { statusLog: [number, string][] }).statusLog);
  const times = await Promise.all(
    rest.map(async (tab) => {
      let seen: [number, string][] = [];
      await expect
        .poll(
          async () => {
            seen = (await statusLog(tab)).filter(([t]) => t >= crashedAt);
            const out = seen.findIndex(([, st]) => st !== "live");
            return out >= 0 && seen.slice(out).some(([, st]) => st === "live");
          },
          { timeout: 10_000, message: "left live and came back" },
        )
        .toBe(true);
      const out = seen.findIndex(([, st]) => st !== "live");
      const back = seen.slice(out).find(([, st]) => st === "live")!;
      return { left: seen[out]![0] - crashedAt, back: back[0] - crashedAt };
    }),
  );
  const left = times.map((t) => t.left);
  const back = times.map((t) => t.back);
  console.log(`leader crash: tabs left live after ${left.join(", ")} ms, were live again after ${back.join(", ")} ms`);
  for (const ms of left) expect(ms).toBeLessThan(1_000);
  for (const ms of back) expect(ms).toBeLessThan(3_000);
  await expectConnections(server, 1);
  const after = await Promise.all(rest.map((t) => t.getByTestId("transport").textContent()));
  expect(after.sort()).toEqual(["follower", "leader"]);

  await burst;
  await server.publish("acme", "after");
  const all = await server.retainedIds("acme");
  expect(all).toHaveLength(44);
  for (const tab of rest) await expectShown(tab, all);
});
