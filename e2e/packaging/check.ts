/**
 * The packaging check (`pnpm test:packages`): builds and packs every package, checks what each
 * tarball holds, installs the tarballs with npm into a scratch app outside the workspace, and
 * uses them there as a user would: Node on the embedded NATS, the `tidemark` bin through npx
 * (input errors, SIGTERM to npx and to its group), `tsc` on every public type (also with
 * `exactOptionalPropertyTypes`), a Vite + React app whose SharedWorker comes from node_modules,
 * in Chromium with two tabs, one fresh app per OpenTelemetry SDK line that must see Tidemark's
 * span and metrics, and `createSync()` on an external nats-server named only by
 * `TIDEMARK_NATS_URL`.
 * KEEP_SCRATCH=1 keeps the scratch directory for a look.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "@playwright/test";
import { chromiumLaunch } from "../lib/browser.js";
import { checkCliInput, checkCliSigterm } from "./cli.js";
import { checkExternalNats } from "./external.js";
import { checkOtelLeg, otelLegs } from "./otel.js";
import { cleanEnv, run, Server } from "./proc.js";
import { checkTarball } from "./tarball.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const packages = ["shared", "server", "client", "react"];
const pkg = (dir: string) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));

const work = mkdtempSync(join(tmpdir(), "tidemark-packages-"));
const tarballs = join(work, "tarballs");
const app = join(work, "app");
const timings: [string, number][] = [];
const servers: Server[] = [];
const findings: string[] = [];

async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  process.stdout.write(`packages: ${name}…\n`);
  const result = await fn();
  timings.push([name, Date.now() - started]);
  return result;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

/** The scratch app's package.json: our tarballs, everything else from the npm registry. */
function writeAppManifest(files: Record<string, string>): void {
  const react = pkg("packages/react").devDependencies;
  const deps: Record<string, string> = {};
  for (const [name, file] of Object.entries(files)) deps[name] = `file:${file}`;
  for (const name of ["react", "react-dom", "@types/react", "@types/react-dom"]) deps[name] = react[name];
  deps.hono = pkg("packages/server").dependencies.hono;
  deps["@types/node"] = pkg(".").devDependencies["@types/node"];
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "tidemark-scratch", private: true, type: "module", dependencies: deps }, null, 2));
}

async function npmInstall(): Promise<void> {
  const args = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
  try {
    await run("npm", args, app);
  } catch {
    await run("npm", args, app); // one retry for a registry hiccup
  }
}

async function browserCheck(port: number): Promise<void> {
  const browser = await chromium.launch(chromiumLaunch);
  try {
    const context = await browser.newContext();
    const url = `http://127.0.0.1:${port}/`;
    const tabs = [await context.newPage(), await context.newPage()];
    for (const tab of tabs) await tab.goto(url);
    for (const tab of tabs) {
      await tab.getByTestId("tabs").filter({ hasText: /^2$/ }).waitFor({ timeout: 20_000 });
      await tab.locator('[data-testid="status"][data-status="live"]').waitFor({ timeout: 20_000 });
      const transport = await tab.getByTestId("transport").textContent();
      if (transport !== "shared-worker") throw new Error(`transport is ${transport}, not the SharedWorker`);
    }
    const stats = (await (await fetch(`${url}stats`)).json()) as { connections: number };
    if (stats.connections !== 1) throw new Error(`two tabs hold ${stats.connections} WebSockets, not 1`);
    const published = await fetch(`${url}publish`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"text":"fresh"}' });
    if (!published.ok) throw new Error(`publish answered ${published.status}`);
    for (const tab of tabs) {
      await tab.getByTestId("event").filter({ hasText: "fresh" }).waitFor({ timeout: 10_000 });
      // A new feed starts at the head: the events server.mjs published earlier are not shown.
      const shown = await tab.getByTestId("event").allTextContents();
      if (shown.join(",") !== "fresh") throw new Error(`a tab shows ${shown.join(",")}, not the one new event`);
    }
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  // A fresh dist: files left by an earlier build must not reach the tarballs.
  for (const dir of packages) rmSync(join(root, "packages", dir, "dist"), { recursive: true, force: true });
  await step("build", () => run("pnpm", ["-r", "--filter", "./packages/**", "run", "build"], root, process.env));
  mkdirSync(tarballs);
  const files: Record<string, string> = {};
  await step("pack", () =>
    Promise.all(
      packages.map(async (dir) => {
        const into = join(tarballs, dir);
        mkdirSync(into);
        await run("pnpm", ["pack", "--pack-destination", into], join(root, "packages", dir), process.env);
        const made = readdirSync(into).find((f) => f.endsWith(".tgz"));
        if (!made) throw new Error(`pnpm pack made no tarball for packages/${dir}`);
        files[pkg(`packages/${dir}`).name] = join(into, made);
      }),
    ),
  );
  await step("tarball contents", () => Promise.all(Object.entries(files).map(([name, file]) => checkTarball(name, file))));
  cpSync(fileURLToPath(new URL("./app/", import.meta.url)), app, { recursive: true });
  writeAppManifest(files);
  await step("npm install", npmInstall);

  const tsc = join(root, "node_modules/typescript/bin/tsc");
  await step("tsc --noEmit", () => run(process.execPath, [tsc, "-p", "tsconfig.json"], app));
  // A user's strictest settings: no declaration file the packages load may fail under them.
  await step("tsc --noEmit, exactOptionalPropertyTypes", () => run(process.execPath, [tsc, "-p", "tsconfig.exact.json"], app));
  await step("vite build", () => run(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "build", "--logLevel", "warn"], app));
  const assets = readdirSync(join(app, "dist/assets"));
  if (!assets.some((f) => /^worker-.*\.js$/.test(f))) throw new Error(`vite emitted no worker chunk: ${assets.join(", ")}`);

  const natsEnv: Record<string, string> = {};
  if (process.env.TIDEMARK_NATS_SERVER) natsEnv.TIDEMARK_NATS_SERVER = process.env.TIDEMARK_NATS_SERVER;
  findings.push(await step("npx tidemark: --version, a typo, a .ts config", () => checkCliInput(app, natsEnv)));
  for (const target of ["process", "group"] as const) {
    const port = await freePort();
    findings.push(await step(`npx tidemark serve: SIGTERM to its ${target}`, () => checkCliSigterm(app, join(work, `cli-${target}`), port, target, natsEnv)));
  }
  const legs = otelLegs.map((leg) => checkOtelLeg(leg, join(work, `otel-${leg.name}`), files, natsEnv));
  findings.push(...(await step("OpenTelemetry SDK 2.x and 3.x beside the tarballs", () => Promise.all(legs))));
  const natsPorts = { client: await freePort(), monitor: await freePort() };
  findings.push(await step("external NATS through TIDEMARK_NATS_URL", () => checkExternalNats(root, app, join(work, "external"), natsPorts)));

  const server = Server.start(process.execPath, ["server.mjs"], app, cleanEnv({ ...natsEnv, TIDEMARK_DATA_DIR: join(work, "data") }));
  servers.push(server);
  const ready = await step("node: publish and replay", () => server.readyLine<{ port: number; replayed: number }>(60_000));
  await step("chromium: two tabs, one socket", () => browserCheck(ready.port));
  await server.stop();

  const sizes = Object.entries(files).map(([name, file]) => `${name} ${(statSync(file).size / 1024).toFixed(1)} kB`);
  for (const finding of findings) console.log(`packages: ${finding}`);
  console.log(`packages: tarballs (gzip) ${sizes.join(", ")}`);
  console.log(`packages: ${timings.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)} s`).join(", ")}`);
  console.log(`packages: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const s of servers) await s.stop().catch(() => undefined);
    if (process.env.KEEP_SCRATCH === "1") console.log(`packages: scratch kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  });
