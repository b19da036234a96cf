import { describe, it, expect } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { createSync, startEmbeddedNats } from "../../src/index.js";
import { uniqueNamespace } from "@tidemark/testing";
import { firstLine, spawnFixture } from "./fixtures/run.js";

const tempDir = () => mkdtempSync(join(tmpdir(), "tidemark-creds-"));
const mode = (path: string) => statSync(path).mode & 0o777;

/** The client URLs an operator would find in the data directory's ports file. */
function portsOf(dataDir: string): { nats: string[]; websocket: string[] } {
  const dir = join(dataDir, "nats");
  return JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".ports"))!), "utf8")) as {
    nats: string[];
    websocket: string[];
  };
}

async function refusal(options: Parameters<typeof connect>[0]): Promise<string> {
  try {
    const nc = await connect({ reconnect: false, timeout: 5_000, ...options });
    await nc.close();
    return "connected";
  } catch (err) {
    return (err as Error).message;
  }
}

describe("embedded nats-server credentials", () => {
  it("embedded - a raw connection without the data directory's credentials is refused, TCP and WebSocket; the Sync's own works", async () => {
    const dataDir = tempDir();
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir } });
    try {
      await sync.topic({ id: "creds.events" }).publish({ data: { secret: true }, tenantId: "acme" });
      const ports = portsOf(dataDir);
      const url = ports.nats.find((u) => u.includes("127.0.0.1"))!;
      expect(await refusal({ servers: url })).toMatch(/authorization/i);
      expect(await refusal({ servers: url, user: "tidemark", pass: "guess-guess-guess" })).toMatch(/authorization/i);

      const ws = ports.websocket.find((u) => u.includes("127.0.0.1"))!.replace(/^http/, "ws");
      const probe = await firstLine<{ error?: string; jetstream?: string }>(spawnFixture("ws-probe.ts", [ws]));
      expect(probe.error).toMatch(/authorization/i);

      const creds = JSON.parse(readFileSync(join(dataDir, "nats", "credentials.json"), "utf8")) as { user: string; pass: string };
      const withCreds = await firstLine<{ error?: string; jetstream?: string }>(spawnFixture("ws-probe.ts", [ws, creds.user, creds.pass]));
      expect(withCreds.jetstream).toBe("io.nats.jetstream.api.v1.account_info_response");
      expect((await sync.server()).embedded?.credentialsFile).toBe(join(dataDir, "nats", "credentials.json"));
    } finally {
      await sync.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - the credentials and the config file are 0600, the nats directory 0700, and a restart reuses the credentials", async () => {
    const dataDir = tempDir();
    try {
      const first = await startEmbeddedNats({ dataDir, websocket: false });
      const creds = first.credentials!;
      expect(creds.pass.length).toBeGreaterThanOrEqual(16);
      expect(mode(join(dataDir, "nats", "credentials.json"))).toBe(0o600);
      expect(mode(join(dataDir, "nats", "nats.conf"))).toBe(0o600);
      expect(mode(join(dataDir, "nats"))).toBe(0o700);
      const nc = await connect({ servers: first.url, ...creds });
      await nc.close();
      await first.stop();

      await using second = await startEmbeddedNats({ dataDir, websocket: false });
      expect(second.credentials).toEqual(creds);
      const again = await connect({ servers: second.url, ...creds });
      await again.close();
      expect(await refusal({ servers: second.url })).toMatch(/authorization/i);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - two data directories get different credentials", async () => {
    const dirs = [tempDir(), tempDir()];
    try {
      await using a = await startEmbeddedNats({ dataDir: dirs[0], websocket: false });
      await using b = await startEmbeddedNats({ dataDir: dirs[1], websocket: false });
      expect(a.credentials!.pass).not.toBe(b.credentials!.pass);
      expect(await refusal({ servers: b.url, ...a.credentials })).toMatch(/authorization/i);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
