/**
 * CI check: nothing Node-only (node: modules, Buffer, process, ws, transport-node) leaks into
 * the runtime-neutral code. It scans the import graph of each edge entry.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findNodeOnly } from "./neutral.js";

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");
// hono's Deno and Bun adapters import node:path for serveStatic; both runtimes provide it.
const honoRuntimeAdapter = (file: string, path: string) => path.startsWith("node:") && /hono\/dist\/adapter\/(deno|bun)\//.test(file);

describe("edge neutrality", () => {
  it("edge neutrality - the neutral entry @tidemark/server/edge reaches no Node-only module or global", async () => {
    expect(await findNodeOnly(join(src, "edge/index.ts"))).toEqual([]);
  });

  it("edge neutrality - the Workers entry reaches no Node-only module or global", async () => {
    expect(await findNodeOnly(join(src, "edge/workers.ts"))).toEqual([]);
  });

  it("edge neutrality - the Deno and Bun entries reach Node modules only inside hono's own runtime adapter", async () => {
    expect(await findNodeOnly(join(src, "edge/deno.ts"), { allow: honoRuntimeAdapter })).toEqual([]);
    expect(await findNodeOnly(join(src, "edge/bun.ts"), { allow: honoRuntimeAdapter })).toEqual([]);
  });

  it("edge neutrality - the Node entry is not neutral (the check sees TCP NATS, the embedded server and process)", async () => {
    const leaks = await findNodeOnly(join(src, "index.ts"));
    const what = leaks.map((l) => l.what);
    expect(what).toContain("imports @nats-io/transport-node");
    expect(what).toContain("imports node:child_process");
    expect(what).toContain("uses the global process");
  });

  it("edge neutrality - a leak in a file the neutral code imports is reported with its file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-neutral-"));
    try {
      writeFileSync(join(dir, "leaky.ts"), 'import { readFileSync } from "node:fs";\nexport const v = readFileSync(process.env.X ?? "", "utf8") + Buffer.from("a").length;\n');
      writeFileSync(join(dir, "clean.ts"), 'import { v } from "./leaky.js";\nconst process = (x: string) => x;\nexport const w = process(String(v)) + ({ process }).process("y");\n');
      const leaks = await findNodeOnly(join(dir, "clean.ts"));
      expect(leaks.map((l) => `${l.file.split("/").pop()}: ${l.what}`).sort()).toEqual([
        "leaky.ts: imports node:fs",
        "leaky.ts: uses the global Buffer",
        "leaky.ts: uses the global process",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
