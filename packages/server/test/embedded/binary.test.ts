import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, ErrorCode, findNatsServer, NatsServerNotFoundError } from "../../src/index.js";
import { uniqueNamespace } from "../harness/nats.js";

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
      expect(findNatsServer({ PATH: `${join(dir, "missing")}:${dir}` })).toBe(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
