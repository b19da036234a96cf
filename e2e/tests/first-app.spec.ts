/**
 * docs/first-app.md's app (examples/first-app) as a reader runs it: built with Vite, started
 * with `node server/main.ts`, in Chromium. An order placed from the page comes back, through
 * the worker, as a notification in every tab; without TOKEN_SECRET the server does not start.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test, expect } from "@playwright/test";

const appDir = fileURLToPath(new URL("../../examples/first-app/", import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function start(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let output = "";
  const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", "tsx", "server/main.ts"], {
    cwd: appDir,
    env: { ...process.env, TIDEMARK_DATA_DIR: mkdtempSync(join(tmpdir(), "tidemark-first-app-")), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

test.beforeAll(() => {
  execFileSync("pnpm", ["exec", "vite", "build", "--logLevel", "warn"], { cwd: appDir, stdio: "inherit" });
});

test("first app - without TOKEN_SECRET the server stops at start with INVALID_ARGUMENT", async () => {
  const { output, exited } = start({ PORT: String(await freePort()), TOKEN_SECRET: "" });
  expect(await exited).not.toBe(0);
  expect(output()).toContain("INVALID_ARGUMENT");
  expect(output()).toContain("tokenAuthenticator: `key` is an empty string");
});

test("first app - an order placed in one tab reaches both tabs as a notification, on one connection", async ({ context }) => {
  const port = await freePort();
  const app = start({ PORT: String(port), TOKEN_SECRET: "first-app-secret-of-at-least-32-bytes" });
  try {
    await expect.poll(app.output, { timeout: 30_000 }).toContain("first app on");
    const url = `http://localhost:${port}/`;
    const one = await context.newPage();
    await one.goto(url);
    const two = await context.newPage();
    await two.goto(url);
    for (const page of [one, two]) await expect(page.getByText(/^live, 2 tabs on one connection$/)).toBeVisible();
    await one.getByRole("button", { name: "Order a tide table" }).click();
    for (const page of [one, two]) await expect(page.getByRole("listitem")).toHaveText([/^Order \w+: 1 × tide table confirmed$/]);
  } finally {
    app.child.kill("SIGTERM");
    await app.exited;
  }
});
