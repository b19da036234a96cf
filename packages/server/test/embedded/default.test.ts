import { describe, it, expect } from "vitest";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exited, firstLine, gone, spawnFixture } from "./fixtures/run.js";

/** The environment of a child with no Tidemark configuration. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.TIDEMARK_NATS_URL;
  delete env.TIDEMARK_NAMESPACE;
  if (!("TIDEMARK_DATA_DIR" in extra)) delete env.TIDEMARK_DATA_DIR;
  return env;
}

async function runDefault(cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawnFixture("default-sync.ts", [], { cwd, env });
  const out = await firstLine<{ sequence: number; natsPid: number }>(child);
  expect(out.sequence).toBe(1);
  await exited(child);
  expect(child.exitCode).toBe(0);
  expect(await gone(out.natsPid)).toBe(true); // close() stopped the embedded server
}

describe("embedded nats-server as the environment default", () => {
  it("embedded - with no NATS URL, lazySync runs an embedded server under TIDEMARK_DATA_DIR", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "tidemark-cwd-"));
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-data-"));
    try {
      await runDefault(cwd, bareEnv({ TIDEMARK_DATA_DIR: dataDir }));
      expect(readdirSync(join(dataDir, "nats", "jetstream"), { recursive: true }).some((f) => String(f).includes("TMEV_app_default~events"))).toBe(true);
      expect(existsSync(join(cwd, ".tidemark"))).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - with no NATS URL and no TIDEMARK_DATA_DIR, the store is .tidemark in the working directory", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "tidemark-cwd-"));
    try {
      await runDefault(cwd, bareEnv());
      expect(readdirSync(join(cwd, ".tidemark", "nats", "jetstream"), { recursive: true }).some((f) => String(f).includes("TMEV_app_default~events"))).toBe(true);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
