/**
 * The browser benchmark's measuring part (it lives in the e2e package, which has Playwright);
 * `bench/browser.bench.ts` runs it and prints the table. See that file for what is measured.
 */
import { execFileSync } from "node:child_process";
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from "@playwright/test";
import { DemoServer, demoDir } from "../lib/demo-server.js";
import { chromiumLaunch } from "../lib/browser.js";
import { sharedWorkerSession } from "./worker-cdp.js";
import { browserCpuByThread, browserCpuMs, cpuDelta, serverCpuMs } from "./browser-cpu.js";

export const TABS = 10;
export const EVENTS = 1_000;

export interface Sample {
  /** Time the server took to publish the 1,000 events (the floor of renderMs). */
  publishMs: number;
  connections: number;
  renderMs: number;
  /** CPU time of every browser process from the start of publishing to the last render. */
  browserCpuMs: number;
  /** CPU time of the demo server and its nats-server over the same span. */
  serverCpuMs: number;
  tabsHeapMb: number;
  workerHeapMb: number | undefined;
}

async function heapMb(session: CDPSession): Promise<number> {
  await session.send("HeapProfiler.collectGarbage");
  const { usedSize } = (await session.send("Runtime.getHeapUsage")) as { usedSize: number };
  return usedSize / 2 ** 20;
}

/** The SharedWorker's heap (Playwright has no SharedWorker API: see worker-cdp.ts). */
async function sharedWorkerHeapMb(b: Browser): Promise<number | undefined> {
  const worker = await sharedWorkerSession(b);
  if (!worker) return undefined;
  try {
    await worker.call("HeapProfiler.collectGarbage");
    const usage = await worker.call("Runtime.getHeapUsage");
    return Number(usage.usedSize) / 2 ** 20;
  } finally {
    await worker.close();
  }
}

/** How the page connects: the default SharedWorker, the Web Locks leader fallback, a socket per tab. */
export type Side = "auto" | "leader" | "direct";

/** Opens the 10 tabs of one side, waits until each is live and the server counts its sockets. */
export async function openTabs(context: BrowserContext, server: DemoServer, transport: Side, tenant: string): Promise<{ pages: Page[]; connections: number }> {
  const pages: Page[] = [];
  for (let i = 0; i < TABS; i++) {
    const page = await context.newPage();
    await page.goto(`${server.url}/?tenant=${tenant}&transport=${transport}`);
    pages.push(page);
  }
  for (const page of pages) await page.getByTestId("connection-status").filter({ hasText: "live" }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await server.connections()) === (transport === "direct" ? TABS : 1), 15_000);
  return { pages, connections: await server.connections() };
}

/**
 * Each tab counts the events it receives; once it has all of them, it notes when the last one's
 * row is on the page and laid out (`window.done`): the first frame whose DOM holds that row,
 * then the task after that frame's style, layout and paint.
 */
export async function armTabs(pages: Page[]): Promise<void> {
  await Promise.all(pages.map((page) => page.evaluate(ARM_SCRIPT)));
}

// A string, not a function: tsx would wrap the named helpers in its own `__name`, which the page lacks.
const ARM_SCRIPT = `(() => {
  const events = ${EVENTS};
  window.done = new Promise((resolve) => {
    let seen = 0;
    const afterFrame = () => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(Date.now());
      channel.port2.postMessage(0);
    };
    const untilShown = (eventId) =>
      requestAnimationFrame(() => (document.querySelector('[data-event-id="' + eventId + '"]') ? afterFrame() : untilShown(eventId)));
    window.tidemark.feed().onItems((items, info) => {
      if (info.history) return;
      seen += items.length;
      const last = items.at(-1)?.event?.eventId;
      if (seen >= events && last) untilShown(last);
    });
  });
})()`;

/** When each tab rendered its last event (ms since the epoch). */
export function renderedAt(pages: Page[]): Promise<number[]> {
  return Promise.all(pages.map((page) => page.evaluate(() => (window as unknown as { done: Promise<number> }).done)));
}

async function run(browser: Browser, server: DemoServer, transport: Side, round: number): Promise<Sample> {
  const context: BrowserContext = await browser.newContext();
  // A tenant per run: every run starts with an empty feed.
  const tenant = round % 2 === 0 ? "acme" : "globex";
  try {
    const { pages, connections } = await openTabs(context, server, transport, tenant);
    await armTabs(pages);
    const cpuBefore = browserCpuMs();
    const threadsBefore = process.env.BENCH_CPU_THREADS ? browserCpuByThread() : undefined;
    const serverBefore = serverCpuMs();
    const start = Date.now();
    const published = await server.publish(tenant, `bench ${round}`, EVENTS);
    const publishMs = Date.now() - start;
    if (published.status !== 200) throw new Error(`publish failed: ${JSON.stringify(published.body)}`);
    const renderMs = Math.max(...(await renderedAt(pages))) - start;
    const browserCpu = browserCpuMs() - cpuBefore;
    const serverCpu = serverCpuMs() - serverBefore;
    // BENCH_CPU_THREADS=1: which of the browser's threads the burst kept busy (stderr, per round).
    if (threadsBefore) {
      const rows = cpuDelta(threadsBefore, browserCpuByThread()).map(([k, ms]) => `${k} ${ms}`);
      console.error(`${transport} round ${round}: render ${renderMs} ms, publish ${publishMs} ms, browser cpu ${browserCpu} ms, server cpu ${serverCpu} ms: ${rows.join(", ")}`);
    }
    let tabsHeapMb = 0;
    for (const page of pages) {
      const session = await context.newCDPSession(page);
      tabsHeapMb += await heapMb(session);
      await session.detach();
    }
    const workerHeapMb = transport === "auto" ? await sharedWorkerHeapMb(browser) : undefined;
    return { publishMs, connections, renderMs, browserCpuMs: browserCpu, serverCpuMs: serverCpu, tabsHeapMb, workerHeapMb };
  } finally {
    await context.close();
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs warm-up plus `rounds` alternating rounds of each side against a fresh demo server. */
export async function measure(rounds: number, sides: readonly Side[] = ["auto", "leader", "direct"]): Promise<{ samples: Record<Side, Sample[]>; chromium: string }> {
  execFileSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], { cwd: demoDir, stdio: "inherit" });
  // Buffered, like every other benchmark's server: under "fsync" (the embedded default) each
  // acknowledgement waits for the disk, and this machine's disk (~250 fsyncs/s) would be the
  // floor of the render row, not Tidemark.
  const server = await DemoServer.start({ env: { DEMO_DURABILITY: "buffered" } });
  const browser = await chromium.launch(chromiumLaunch);
  const samples: Record<Side, Sample[]> = { auto: [], leader: [], direct: [] };
  try {
    await run(browser, server, "auto", 0); // warm-up: JIT, assets in the HTTP cache, hubs on the server
    for (let round = 1; round <= rounds; round++) {
      // Rotate which side goes first, so drift in the machine hits every side alike.
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      for (const side of order) samples[side].push(await run(browser, server, side, round));
    }
    return { samples, chromium: browser.version() };
  } finally {
    await browser.close();
    await server.dispose();
  }
}
