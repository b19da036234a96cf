import type { Page } from "@playwright/test";
import { expectShown, openTabs, test, expect } from "../lib/demo.js";

/** The demo's RENDER_INTERVAL_MS (apps/demo/src/list.ts); the check leaves half of it as margin. */
const RENDER_INTERVAL_MS = 100;

test("burst - the list takes a burst in few DOM updates, at most one per render interval, every event once and in order", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  // When the list's rows changed: one MutationObserver callback per task that changed them.
  await tab!.evaluate(() => {
    const w = window as unknown as { listUpdates: number[] };
    w.listUpdates = [];
    new MutationObserver(() => w.listUpdates.push(performance.now())).observe(document.querySelector("#list")!, { childList: true });
  });
  // Three batches at once: the events reach the tab in several of the client's 16 ms batches.
  const token = await server.login();
  const sent = await Promise.all([1, 2, 3].map((k) => server.publishRequest({ tenantId: "acme", text: `burst ${k}`, count: 100 }, { token })));
  expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
  await expectShown(tab!, await server.retainedIds("acme"));
  const updates = await tab!.evaluate(() => (window as unknown as { listUpdates: number[] }).listUpdates);
  expect(updates.length).toBeGreaterThan(0);
  const gaps = updates.slice(1).map((t, i) => t - updates[i]!);
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(RENDER_INTERVAL_MS / 2);
  await expect(tab!.getByTestId("unread-count")).toHaveText("300");
});

// Counts what the page does with Web Audio, whatever the demo's own counters say: every
// AudioContext made and every oscillator started.
const AUDIO_PROBE = `(() => {
  const probe = { contexts: [], oscillators: 0 };
  window.audioProbe = probe;
  const Native = window.AudioContext;
  window.AudioContext = class extends Native {
    constructor(...args) { super(...args); probe.contexts.push(this); }
    createOscillator() { probe.oscillators++; return super.createOscillator(); }
  };
})()`;
type Probe = { contexts: AudioContext[]; oscillators: number };

/** A user's click on the page: after it, the autoplay policy lets the page's AudioContext run. */
const clickOnce = (tab: Page) => tab.getByRole("heading", { name: "What you are looking at" }).click();

test.describe("burst - sound", () => {
  test("burst - a burst of N events beeps at most ceil(seconds) + 1 times, one beep a second at most", async ({ context, server }) => {
    await context.addInitScript(AUDIO_PROBE);
    const [tab] = await openTabs(context, server.url, 1);
    await clickOnce(tab!);
    const token = await server.login();
    const start = Date.now();
    const sent = await Promise.all([1, 2, 3].map((k) => server.publishRequest({ tenantId: "acme", text: `beep ${k}`, count: 100 }, { token })));
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    await expectShown(tab!, await server.retainedIds("acme"));
    const seconds = (Date.now() - start) / 1000;
    // This tab is the profile's only one, so it plays the effects of all 300 events.
    await expect(tab!.getByTestId("effect-count")).toHaveText("300");
    const oscillators = await tab!.evaluate(() => (window as unknown as { audioProbe: Probe }).audioProbe.oscillators);
    expect(oscillators).toBeGreaterThan(0);
    expect(oscillators).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    await expect(tab!.getByTestId("effect-count")).toHaveAttribute("data-beeps", String(oscillators));
  });

  test("burst - after a burst the tab's AudioContext is suspended: an idle tab runs no audio thread", async ({ context, server }) => {
    await context.addInitScript(AUDIO_PROBE);
    const [tab] = await openTabs(context, server.url, 1);
    await clickOnce(tab!);
    const token = await server.login();
    expect((await server.publishRequest({ tenantId: "acme", text: "ring", count: 50 }, { token })).status).toBe(200);
    await expectShown(tab!, await server.retainedIds("acme"));
    const states = () => tab!.evaluate(() => (window as unknown as { audioProbe: Probe }).audioProbe.contexts.map((c) => c.state));
    // It played: a context was made and ran.
    expect(await states()).toHaveLength(1);
    await expect.poll(states, { timeout: 5_000 }).toEqual(["suspended"]);
    await expect(tab!.getByTestId("effect-count")).toHaveAttribute("data-audio", "suspended");
    // The next event beeps again (the context is resumed), then it is suspended again.
    const beeps = Number(await tab!.getByTestId("effect-count").getAttribute("data-beeps"));
    await tab!.waitForTimeout(1_000);
    expect((await server.publishRequest({ tenantId: "acme", text: "again" }, { token })).status).toBe(200);
    await expect(tab!.getByTestId("effect-count")).toHaveAttribute("data-beeps", String(beeps + 1));
    await expect.poll(states, { timeout: 5_000 }).toEqual(["suspended"]);
  });
});

test("burst - the list scrolls in its own box, holds every event of the burst and shows the newest first", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  const token = await server.login();
  const sent = await Promise.all([1, 2, 3].map((k) => server.publishRequest({ tenantId: "acme", text: `box ${k}`, count: 100 }, { token })));
  expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
  const ids = await server.retainedIds("acme");
  await expectShown(tab!, ids);
  const layout = await tab!.evaluate(() => {
    const list = document.querySelector<HTMLElement>("#list")!;
    // The nearest element that scrolls the list, short of the page itself.
    let box: HTMLElement | null = list;
    while (box && box !== document.body && !/auto|scroll/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
    if (!box || box === document.body) return undefined;
    const rows = [...list.querySelectorAll<HTMLElement>("li")];
    const boxRect = box.getBoundingClientRect();
    const visible = (li: HTMLElement) => {
      const r = li.getBoundingClientRect();
      return r.bottom > boxRect.top && r.top < boxRect.bottom;
    };
    const topDown = rows.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top).map((li) => li.dataset.eventId!);
    const newestVisible = visible(list.lastElementChild as HTMLElement);
    box.scrollTop = box.scrollHeight;
    const oldestVisibleAtEnd = visible(list.firstElementChild as HTMLElement);
    return {
      boxHeight: box.clientHeight,
      scrollHeight: box.scrollHeight,
      viewport: innerHeight,
      pageScrolls: document.documentElement.scrollHeight > innerHeight,
      topDown,
      newestVisible,
      oldestVisibleAtEnd,
    };
  });
  expect(layout, "no scroll box around the list").toBeDefined();
  expect(layout!.boxHeight).toBeLessThanOrEqual(Math.ceil(layout!.viewport * 0.6));
  expect(layout!.scrollHeight).toBeGreaterThan(layout!.boxHeight);
  expect(layout!.pageScrolls).toBe(false);
  expect(layout!.topDown).toEqual([...ids].reverse());
  expect(layout!.newestVisible).toBe(true);
  expect(layout!.oldestVisibleAtEnd).toBe(true);
});
