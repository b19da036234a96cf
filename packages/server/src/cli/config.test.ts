import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { configHubs, explainImportError, loadConfigModule, resolveConfig, type ConfigModule } from "./config.js";
import type { Sync } from "../core/types.js";

describe("cli config loading", () => {
  it("config - a .ts config that Node cannot import is an InvalidArgumentError saying what to do", () => {
    const cause = Object.assign(new TypeError('Unknown file extension ".ts"'), { code: "ERR_UNKNOWN_FILE_EXTENSION" });
    const err = explainImportError("tidemark.config.ts", cause, "v20.20.2");
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err?.code).toBe(ErrorCode.InvalidArgument);
    expect(err?.cause).toBe(cause);
    expect(err?.message).toContain("tidemark.config.ts is TypeScript, which Node v20.20.2 cannot import");
    expect(err?.message).toContain(".mjs");
    expect(err?.message).toContain("Node 22.18+");
    expect(err?.message).toContain('NODE_OPTIONS="--import tsx"');
  });

  it("config - errors of the module itself pass through unchanged", () => {
    expect(explainImportError("tidemark.config.mjs", Object.assign(new Error("x"), { code: "ERR_UNKNOWN_FILE_EXTENSION" }), "v20.0.0")).toBeUndefined();
    expect(explainImportError("tidemark.config.ts", new SyntaxError("Unexpected token"), "v24.0.0")).toBeUndefined();
  });

  it("config - a missing file is an InvalidArgumentError naming the path looked at", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-config-"));
    try {
      await expect(loadConfigModule(join(dir, "nope.mjs"))).rejects.toThrow(/nope\.mjs does not exist/);
      writeFileSync(join(dir, "empty.mjs"), "export const x = 1;\n");
      await expect(loadConfigModule(join(dir, "empty.mjs"))).rejects.toThrow(InvalidArgumentError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("config - hubs come from an object config; a config function that returns hubs is refused, not ignored", async () => {
    const base = { topics: [{ id: "inbox", authorize: () => true }], authenticate: () => ({}) };
    expect(configHubs({ ...base, hubs: { feedBacklogBytes: 64 << 20 } })).toEqual({ feedBacklogBytes: 64 << 20 });
    expect(configHubs(base)).toBeUndefined();
    expect(() => configHubs({ ...base, hubs: 5 } as unknown as ConfigModule)).toThrow(InvalidArgumentError);
    const fn: ConfigModule = () => ({ ...base, topics: [], hubs: { maxCatchUps: 8 } });
    expect(configHubs(fn)).toBeUndefined();
    const sync = { topic: () => ({}) } as unknown as Sync;
    const withTopic: ConfigModule = () => ({ ...base, hubs: { maxCatchUps: 8 } });
    await expect(resolveConfig(withTopic, sync)).rejects.toThrow(/config\.hubs is read before the Sync is created/);
  });
});
