import { describe, it, expect } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, ErrorCode, findNatsServer, NatsServerNotFoundError } from "../../src/index.js";
import { toolsSearchDirs } from "../../src/internal.js";
import { uniqueNamespace } from "@tidemark/testing";

describe("embedded nats-server binary", () => {
  it("embedded - TIDEMARK_NATS_SERVER pointing nowhere with an empty PATH fails naming the install command", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-binary-"));
    const saved = { bin: process.env.TIDEMARK_NATS_SERVER, path: process.env.PATH };
    process.env.TIDEMARK_NATS_SERVER = join(dataDir, "no-such", "nats-server");
    process.env.PATH = "";
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir } });
    try {
      const err = await sync.topic({ id: "binary.events" }).publish({ data: 1 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(NatsServerNotFoundError);
      expect(err).toMatchObject({ name: "NatsServerNotFoundError", code: ErrorCode.NatsServerNotFound });
      expect((err as Error).message).toContain("apt-get install nats-server");
      expect((err as Error).message).toContain(process.env.TIDEMARK_NATS_SERVER);
      expect(sync.connected).toBe(false);
    } finally {
      process.env.TIDEMARK_NATS_SERVER = saved.bin;
      if (saved.bin === undefined) delete process.env.TIDEMARK_NATS_SERVER;
      process.env.PATH = saved.path;
      await sync.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - a TIDEMARK_NATS_SERVER that is not executable is refused, not searched past", () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-binary-"));
    try {
      const file = join(dir, "nats-server");
      writeFileSync(file, "#!/bin/sh\n", { mode: 0o644 });
      expect(() => findNatsServer({ TIDEMARK_NATS_SERVER: file, PATH: "/usr/sbin:/usr/bin" })).toThrow(NatsServerNotFoundError);
      expect(() => findNatsServer({ TIDEMARK_NATS_SERVER: file, PATH: "" })).toThrow(/apt-get install nats-server/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("embedded - the binary is taken from PATH before the /usr/sbin fallback", () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-binary-"));
    try {
      const file = join(dir, "nats-server");
      writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
      expect(findNatsServer({ PATH: `${join(dir, "missing")}:${dir}` }, { toolsDirs: [] })).toBe(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("embedded - the project's .tools/bin/nats-server comes after TIDEMARK_NATS_SERVER and before PATH", () => {
    const root = mkdtempSync(join(tmpdir(), "tidemark-tools-"));
    try {
      const tools = join(root, "project", ".tools", "bin");
      mkdirSync(tools, { recursive: true });
      const local = join(tools, "nats-server");
      writeFileSync(local, "#!/bin/sh\n", { mode: 0o755 });
      const onPath = join(root, "nats-server");
      writeFileSync(onPath, "#!/bin/sh\n", { mode: 0o755 });
      const dirs = [join(root, "project", "packages", "server"), join(root, "project", "packages"), join(root, "project"), root];
      expect(findNatsServer({ PATH: root }, { toolsDirs: dirs })).toBe(local);
      expect(findNatsServer({ PATH: root, TIDEMARK_NATS_SERVER: onPath }, { toolsDirs: dirs })).toBe(onPath);
      expect(findNatsServer({ PATH: root }, { toolsDirs: [join(root, "elsewhere")] })).toBe(onPath);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("embedded - the tools directory is searched from this package up to the workspace root, then from the working directory up", () => {
    const workspaceRoot = fileURLToPath(new URL("../../../../", import.meta.url)).replace(/\/$/, "");
    const dirs = toolsSearchDirs("/tmp/somewhere/else");
    expect(dirs.indexOf(workspaceRoot)).toBeGreaterThan(0);
    expect(dirs.indexOf("/tmp/somewhere/else")).toBeGreaterThan(dirs.indexOf(workspaceRoot));
    expect(dirs).toContain("/tmp/somewhere");
  });
});
