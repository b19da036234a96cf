import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { DataDirInUseError } from "../../src/internal.js";
import { EmbeddedNatsError, startEmbeddedNats } from "../../src/index.js";

describe("embedded data dir", () => {
  it("embedded - a second start on a data dir in use is refused and leaves the running server alone", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-inuse-"));
    const first = await startEmbeddedNats({ dataDir });
    try {
      const err = await startEmbeddedNats({ dataDir }).then(
        () => new Error("second start succeeded"),
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(DataDirInUseError);
      expect(err.message).toMatch(/in use/);
      const nc = await connect({ servers: first.url, ...first.credentials });
      expect(nc.info?.jetstream).toBe(true);
      await nc.close();
    } finally {
      await first.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("embedded data dir that cannot hold a store", () => {
  it("embedded - a data dir that is a file fails the start with a typed error naming the path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-baddir-"));
    const file = join(dir, "a-file");
    writeFileSync(file, "x");
    try {
      const err: Error & { code?: string } = await startEmbeddedNats({ dataDir: file }).then(
        () => new Error("start succeeded"),
        (e: unknown) => e as Error & { code?: string },
      );
      expect(err).toBeInstanceOf(EmbeddedNatsError);
      expect(err.code).toBe("BROKER_UNAVAILABLE");
      expect(err.message).toContain(file);
      expect(err.message).toMatch(/ENOTDIR/);
      expect(err.message).toMatch(/TIDEMARK_DATA_DIR/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
