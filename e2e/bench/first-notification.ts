/**
 * The first notification after a page load (issue 25, item 6): the time from publish to the
 * row in the page for an event published about 0.5 s after the feed went `live` (after a click
 * on the page, as when the user publishes from the form), then for three later ones, each run
 * in a fresh Chromium. Also how long each `new AudioContext()` of the page took: the demo's
 * first beep makes one, and it holds the tab's main thread (see apps/demo/src/chime.ts).
 * Both clocks are the machine's (Date.now() in Node and in the page).
 *
 *   npx tsx --conditions=@tidemark/source e2e/bench/first-notification.ts [runs] [transport] [audio]
 *
 * runs: default 3; transport: auto (SharedWorker, default) | leader | direct; audio: on
 * (default) | off (AudioContext removed before the page loads). Build the demo first
 * (`pnpm exec vite build` in apps/demo; the e2e global setup does it too).
 */
import { chromium, type Browser } from "@playwright/test";
import { DemoServer } from "../lib/demo-server.js";
import { chromiumLaunch } from "../lib/browser.js";

const runs = Number(process.argv[2] ?? 3);
const transport = process.argv[3] ?? "auto";
const audio = (process.argv[4] ?? "on") === "on";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Probe = { rowsAt: Record<string, number>; audioMs: number[] };

async function one(b: Browser, server: DemoServer, run: number): Promise<number[]> {
  const context = await b.newContext();
  if (!audio) await context.addInitScript(() => delete (window as { AudioContext?: unknown }).AudioContext);
  const page = await context.newPage();
  await page.addInitScript(() => {
    const w = window as unknown as Probe;
    w.rowsAt = {};
    w.audioMs = [];
    const Native = window.AudioContext;
    if (Native) {
      window.AudioContext = class extends Native {
        constructor(options?: AudioContextOptions) {
          const t = performance.now();
          super(options);
          w.audioMs.push(performance.now() - t);
        }
      };
    }
    // When each probe's row is in the list.
    new MutationObserver(() => {
      for (const li of document.querySelectorAll<HTMLElement>("[data-testid=notification]")) {
        const m = /probe-\d+-\d+/.exec(li.textContent ?? "");
        if (m && w.rowsAt[m[0]] === undefined) w.rowsAt[m[0]] = Date.now();
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  await page.goto(`${server.url}/?tenant=acme&transport=${transport}`);
  await page.getByTestId("connection-status").filter({ hasText: "live" }).waitFor({ timeout: 30_000 });
  await page.getByRole("heading", { name: "What you are looking at" }).click();
  const liveAt = Date.now();
  const out: number[] = [];
  for (const [i, delay] of [500, 1500, 1500, 1500].entries()) {
    await sleep(delay);
    const text = `probe-${run}-${i}`;
    const at = Date.now();
    await server.publish("acme", text);
    const acked = Date.now();
    await page.waitForFunction((t) => (window as unknown as Probe).rowsAt[t] !== undefined, text, { timeout: 10_000 });
    const { row, audioMs } = await page.evaluate((t) => ({ row: (window as unknown as Probe).rowsAt[t]!, audioMs: (window as unknown as Probe).audioMs }), text);
    out.push(row - at);
    console.log(
      `run ${run} event ${i} (${at - liveAt} ms after live): publish->ack ${acked - at} ms, publish->row ${row - at} ms, ` +
        `AudioContext constructions so far: [${audioMs.map((x) => `${Math.round(x)} ms`).join(", ")}]`,
    );
  }
  await context.close();
  return out;
}

const server = await DemoServer.start({ env: { DEMO_LOG_LEVEL: "warn" } });
try {
  const all: number[][] = [];
  // A fresh browser per run: the first page of a browser is the case the issue measured.
  for (let r = 0; r < runs; r++) {
    const browser = await chromium.launch(chromiumLaunch);
    try {
      all.push(await one(browser, server, r));
    } finally {
      await browser.close();
    }
  }
  console.log(`transport=${transport} audio=${audio ? "on" : "off"}: publish->row by event (ms, one column per run):`);
  for (let i = 0; i < all[0]!.length; i++) console.log(`  event ${i}: ${all.map((a) => a[i]).join(", ")}`);
} finally {
  await server.dispose();
}
