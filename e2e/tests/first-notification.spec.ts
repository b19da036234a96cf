/**
 * The first notification after a page load (issue 25, item 6) took 1.2–1.4 s where later ones
 * took 20–40 ms. Cause, measured with e2e/bench/first-notification.ts: the demo's first beep
 * constructs an AudioContext inside `onEffect`, and `new AudioContext()` holds the tab's main
 * thread while the audio stack starts (69–309 ms in this headless Chromium without a sound
 * device, more with a real one), before the list's render task runs. These tests check the order
 * and the count, not the time: no AudioContext before the user has interacted with the page
 * (the autoplay policy would keep it silent anyway), and after a click the row is in the list
 * before the context is made.
 */
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

// Every AudioContext the page makes, and whether the first notification's row was already in
// the list when it was made.
const PROBE = `(() => {
  const probe = { contexts: 0, rowsAtFirstContext: -1 };
  window.firstProbe = probe;
  const Native = window.AudioContext;
  window.AudioContext = class extends Native {
    constructor(...args) {
      if (probe.contexts++ === 0) probe.rowsAtFirstContext = document.querySelectorAll("[data-testid=notification]").length;
      super(...args);
    }
  };
})()`;
type Probe = { contexts: number; rowsAtFirstContext: number };
const probe = (tab: import("@playwright/test").Page) => tab.evaluate(() => (window as unknown as { firstProbe: Probe }).firstProbe);

test("first notification - a page nobody has clicked shows it without making an AudioContext (it could not play)", async ({ context, server }) => {
  await context.addInitScript(PROBE);
  // Playwright's evaluate() counts as a user gesture, and the checks below evaluate: the page's
  // activation is pinned to "never" instead.
  await context.addInitScript(() => Object.defineProperty(navigator, "userActivation", { value: { hasBeenActive: false, isActive: false } }));
  const [tab] = await openTabs(context, server.url, 1);
  expect((await server.publish("acme", "first")).status).toBe(200);
  await expectShown(tab!, await server.retainedIds("acme"));
  await expect(tab!.getByTestId("effect-count")).toHaveText("1");
  expect((await probe(tab!)).contexts).toBe(0);
});

test("first notification - after a click, its row is in the list before the first AudioContext is made", async ({ context, server }) => {
  await context.addInitScript(PROBE);
  const [tab] = await openTabs(context, server.url, 1);
  await tab!.getByRole("heading", { name: "What you are looking at" }).click();
  expect((await server.publish("acme", "first")).status).toBe(200);
  await expectShown(tab!, await server.retainedIds("acme"));
  await expect.poll(async () => (await probe(tab!)).contexts).toBe(1);
  expect((await probe(tab!)).rowsAtFirstContext).toBe(1);
  await expect(tab!.getByTestId("effect-count")).toHaveAttribute("data-beeps", "1");
});
