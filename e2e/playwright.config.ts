// Playwright against Debian's Chromium (a browser download cannot work here). Each test file
// starts its own demo server (see lib/demo-server.ts); one worker, because every test runs a
// nats-server, a Node server and a browser on a two-core machine.
import { defineConfig } from "@playwright/test";
import { chromiumLaunch } from "./lib/browser.js";

export default defineConfig({
  testDir: "./tests",
  globalSetup: "./lib/global-setup.ts",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  fullyParallel: false,
  // One retry under CI, reported as "flaky" in the list, never silent. A tab that stayed
  // "resuming" after opening was an engine race, now fixed (docs/reliability.md, "Known flake");
  // the retry stays until full runs show the "offline" cases seen beside it were the same.
  retries: process.env.CI ? 1 : 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: chromiumLaunch,
    trace: "retain-on-failure",
  },
});
