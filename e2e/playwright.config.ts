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
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: chromiumLaunch,
    trace: "retain-on-failure",
  },
});
