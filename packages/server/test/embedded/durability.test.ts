import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, findNatsServer, InvalidArgumentError, natsServerVersion, startEmbeddedNats } from "../../src/index.js";
import { uniqueNamespace } from "@tidemark/testing";

const tempDir = () => mkdtempSync(join(tmpdir(), "tidemark-durability-"));
const SYSTEM_29 = "/usr/sbin/nats-server"; // bookworm's 2.9.10, the supported floor
const current = findNatsServer();
const jetstreamBlock = (dataDir: string) => /jetstream \{[^}]*\}/.exec(readFileSync(join(dataDir, "nats", "nats.conf"), "utf8"))![0];

describe("embedded durability and server version", () => {
  it("embedded - on the current server (2.10+) the default is fsync: sync_interval always, reported by sync.server()", async () => {
    expect(natsServerVersion(current)).toMatch(/^2\.(1\d|[2-9]\d)\./); // scripts/install.sh puts 2.10+ in .tools/bin
    const dataDir = tempDir();
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir } });
    try {
      const server = await sync.server();
      expect(server.version).toBe(natsServerVersion(current));
      expect(server.features).toMatchObject({ metadata: true, syncAlways: true, multiFilter: true });
      expect(server.embedded).toMatchObject({ binary: current, durability: "fsync", dataDir });
      expect(jetstreamBlock(dataDir)).toContain("sync_interval: always");
    } finally {
      await sync.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - durability buffered leaves the server's default sync interval", async () => {
    const dataDir = tempDir();
    try {
      await using nats = await startEmbeddedNats({ dataDir, websocket: false, durability: "buffered" });
      expect(nats.durability).toBe("buffered");
      expect(jetstreamBlock(dataDir)).not.toContain("sync_interval");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - on 2.9 the default is buffered, and fsync asked for explicitly is refused naming the version", async () => {
    expect(natsServerVersion(SYSTEM_29)).toMatch(/^2\.9\./);
    const dataDir = tempDir();
    try {
      {
        await using nats = await startEmbeddedNats({ dataDir, websocket: false, binary: SYSTEM_29 });
        expect(nats).toMatchObject({ version: natsServerVersion(SYSTEM_29), durability: "buffered" });
        expect(jetstreamBlock(dataDir)).not.toContain("sync_interval");
      }
      const err = await startEmbeddedNats({ dataDir, websocket: false, binary: SYSTEM_29, durability: "fsync" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as Error).message).toMatch(/2\.10 or newer.*2\.9\.10/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
