import type { Page } from "@playwright/test";
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

/** Records the event id of every notification ever put in the page, before any app code runs. */
function recordRendered(): void {
  const seen = new Set<string>();
  (window as unknown as { rendered: Set<string> }).rendered = seen;
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      for (const node of m.addedNodes) {
        if (node instanceof HTMLElement && node.dataset.eventId) seen.add(node.dataset.eventId);
        if (node instanceof HTMLElement) for (const el of node.querySelectorAll<HTMLElement>("[data-event-id]")) seen.add(el.dataset.eventId!);
      }
    }
  }).observe(document, { childList: true, subtree: true });
}
const rendered = (page: Page) => page.evaluate(() => [...(window as unknown as { rendered: Set<string> }).rendered]);

/** Signs in as `user` with the page's own user switcher (the page reloads). */
async function signIn(page: Page, user: string): Promise<void> {
  await Promise.all([page.waitForEvent("load"), page.getByTestId("user-select").selectOption(user)]);
  await expect(page.getByTestId("user-select")).toHaveValue(user);
}

test("principal - user A signs out and user B signs in on the same profile: B never sees A's saved notifications", async ({ context, server }) => {
  await context.addInitScript(recordRendered);
  // ada's notifications are in globex, a tenant bob may not see: a first visit of bob (which
  // shows the last retained events of a tenant he may see) can show none of them, so any of
  // them on bob's screen would come from ada's saved history.
  const [tab, other] = await openTabs(context, server.url, 2, "?tenant=globex");
  await server.publish("globex", "for ada", 3);
  const adaIds = await server.retainedIds("globex");
  await expectShown(tab!, adaIds);
  await expectShown(other!, adaIds);

  // The other tab keeps the SharedWorker (and its socket) alive across the switch.
  await signIn(tab!, "bob");
  await expect(tab!.getByTestId("connection-status")).toHaveText("live");
  await expect(tab!.getByTestId("refused")).toHaveAttribute("data-code", "FORBIDDEN");
  await expect(other!.getByTestId("notification")).toHaveCount(0);
  await tab!.getByTestId("tenant-select").selectOption("acme");
  await expect(tab!.getByTestId("connection-status")).toHaveText("live");
  await server.publish("acme", "for bob", 1, "bob");
  const bobIds = await server.retainedIds("acme", "bob");
  await expectShown(tab!, bobIds);
  expect(await rendered(tab!)).toEqual(bobIds);

  // Every tab closed (the worker ends), a new one as bob: saved history is bob's only.
  await other!.close();
  await tab!.close();
  const [again] = await openTabs(context, server.url, 1);
  await expectShown(again!, bobIds);
  expect(await rendered(again!)).toEqual(bobIds);

  // ada again, on globex: her saved history is still hers, and she resumes from her own cursor.
  await signIn(again!, "ada");
  await expect(again!.getByTestId("connection-status")).toHaveText("live");
  await again!.getByTestId("tenant-select").selectOption("globex");
  await expect(again!.getByTestId("connection-status")).toHaveText("live");
  await server.publish("globex", "more for ada", 1);
  await expectShown(again!, await server.retainedIds("globex"));
});

test("principal - a refused tenant shows nothing saved, not even what an allowed user saved under it", async ({ context, server }) => {
  await context.addInitScript(recordRendered);
  await context.addCookies([{ name: "demo_user", value: "bob", url: server.url }]);
  const [tab] = await openTabs(context, server.url, 1, "?tenant=initech");
  await server.publish("initech", "bob's", 2, "bob");
  const secret = await server.retainedIds("initech", "bob");
  expect(secret).toHaveLength(2);
  await expectShown(tab!, secret);
  // Saved (history is written at most every 100 ms).
  await tab!.waitForTimeout(500);

  await signIn(tab!, "ada");
  await expect(tab!.getByTestId("refused")).toHaveAttribute("data-code", "FORBIDDEN");
  await expect(tab!.getByTestId("connection-status")).toHaveText("live");
  await expect(tab!.getByTestId("notification")).toHaveCount(0);
  expect(await rendered(tab!)).toEqual([]);
});
