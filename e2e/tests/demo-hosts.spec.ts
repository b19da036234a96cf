// The demo's token and data routes answer only under the demo's own names and to its own page:
// a DNS-rebinding page (another site's name resolving to the demo) and a page of another site
// get nothing, in a real Chromium and over raw HTTP with any Host header.
import { request as httpRequest } from "node:http";
import { chromium } from "@playwright/test";
import { chromiumLaunch } from "../lib/browser.js";
import { test, expect } from "../lib/demo.js";

/** One GET to the demo at 127.0.0.1 with exactly these headers (Host included). */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, headers, setHost: false }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const PAGE = { "x-tidemark-demo": "1" };

test("demo hosts - a page under another name that resolves to the demo (DNS rebinding) reads no token, no events, no page", async ({ server }) => {
  await server.publish("acme", "private");
  // The state after a rebinding: the browser's origin is rebind.test, its requests reach the demo.
  const browser = await chromium.launch({ ...chromiumLaunch, args: [...chromiumLaunch.args, "--host-resolver-rules=MAP rebind.test 127.0.0.1"] });
  try {
    const page = await browser.newPage();
    const origin = `http://rebind.test:${server.port}`;
    const response = await page.goto(`${origin}/`);
    expect(response?.status()).toBe(403);
    expect(new URL(page.url()).origin).toBe(origin);
    // Same-origin for the browser: the page's script may send any header it likes here.
    const read = await page.evaluate(async () => {
      const token = await fetch("/api/token", { headers: { "x-tidemark-demo": "1" } });
      const events = await fetch("/api/events?tenantId=acme");
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`ws://${location.host}/ws`);
        ws.onopen = () => resolve("open");
        ws.onerror = () => resolve("refused");
      });
      return { token: token.status, tokenBody: await token.text(), events: events.status, eventsBody: await events.text(), socket };
    });
    expect(read).toMatchObject({ token: 403, events: 403, socket: "refused" });
    expect(read.tokenBody).not.toContain("token\":\"ey");
    expect(read.eventsBody).not.toContain("ids");
  } finally {
    await browser.close();
  }
  // Nothing refused was handed out.
  expect(await server.tokens()).toBe(0);
});

test("demo hosts - Host is checked by name on every route; the token route answers only the demo's own page", async ({ server }) => {
  const port = server.port;
  const named = (host: string) => get(port, "/api/token", { host, ...PAGE });
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, "127.0.0.1"]) {
    const res = await named(host);
    expect(res.status, host).toBe(200);
    expect(JSON.parse(res.body), host).toMatchObject({ token: expect.any(String) });
  }
  for (const host of [`attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, "localhost.", `127.0.0.2:${port}`]) {
    expect((await named(host)).status, JSON.stringify(host)).toBe(403);
    expect((await get(port, "/api/events?tenantId=acme", { host })).status, host).toBe(403);
    expect((await get(port, "/", { host })).status, host).toBe(403);
  }
  // Not a host at all: Node's HTTP server refuses it before the app (400), or the app does (403).
  expect([400, 403]).toContain((await named("evil.example@127.0.0.1")).status);
  const own = { host: `127.0.0.1:${port}` };
  // Without the page's header, or sent by another site's page (the browser's own Sec-Fetch-Site).
  expect((await get(port, "/api/token", own)).status).toBe(403);
  for (const site of ["cross-site", "same-site", "none"]) {
    expect((await get(port, "/api/token", { ...own, ...PAGE, "sec-fetch-site": site })).status, site).toBe(403);
  }
  expect((await get(port, "/api/token", { ...own, ...PAGE, "sec-fetch-site": "same-origin" })).status).toBe(200);
  expect(await server.tokens()).toBe(6);
});
