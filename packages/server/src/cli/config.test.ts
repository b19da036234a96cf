import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { explainImportError, loadConfigModule } from "./config.js";

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
});
