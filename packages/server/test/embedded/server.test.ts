import { describe, it, expect } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, EmbeddedNatsError, startEmbeddedNats } from "../../src/index.js";
import { monitor, uniqueNamespace } from "@tidemark/testing";
import { alive, firstLine, spawnFixture } from "./fixtures/run.js";

/** Resolves with `p`'s outcome, or "pending" when it has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | "pending"> {
  return Promise.race([
    p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<"pending">((r) => setTimeout(() => r("pending"), ms).unref()),
  ]);
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "tidemark-embedded-"));
}

/** Resolves true when a TCP connection to host:port opens, false when it is refused or times out. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port, timeout: 2_000 });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

describe("embedded nats-server", () => {
  it("embedded - runs JetStream under the data dir, on loopback ports read from the ports file", async () => {
    const dataDir = tempDir();
    try {
      await using nats = await startEmbeddedNats({ dataDir, monitoring: true });
      const portsFile = readdirSync(join(dataDir, "nats")).find((f) => f.endsWith(".ports"));
      expect(portsFile).toBeDefined();
      const ports = JSON.parse(readFileSync(join(dataDir, "nats", portsFile!), "utf8")) as { nats: string[]; websocket: string[] };
      expect(ports.nats.map((u) => new URL(u).port)).toContain(String(nats.port));
      expect(nats.port).not.toBe(4222);
      expect(new URL(nats.url).hostname).toBe("127.0.0.1");
      expect(nats.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      expect(ports.websocket.map((u) => new URL(u).port)).toContain(new URL(nats.wsUrl!).port);
      expect(Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8"))).toBe(nats.pid);

      const varz = await monitor<{ host: string; websocket?: { host: string } }>(nats, "/varz");
      expect(varz.host).toBe("127.0.0.1");
      expect(varz.websocket?.host).toBe("127.0.0.1");
      const jsz = await monitor<{ config: { store_dir: string; max_storage: number } }>(nats, "/jsz");
      expect(jsz.config.store_dir.startsWith(join(dataDir, "nats"))).toBe(true);
      expect(jsz.config.max_storage).toBe(nats.maxFileStore);

      const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url, ...nats.credentials } });
      try {
        const receipt = await sync.topic({ id: "embedded.store" }).publish({ data: { ok: true } });
        expect(receipt.streamSequence).toBe(1);
      } finally {
        await sync.close();
      }
      expect(existsSync(jsz.config.store_dir)).toBe(true);
      expect(readdirSync(jsz.config.store_dir, { recursive: true }).some((f) => String(f).endsWith(".blk"))).toBe(true);

      // Nothing listens on the machine's other addresses.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === "IPv4" && !a.internal);
      if (external) {
        expect(await reachable(external.address, nats.port)).toBe(false);
        expect(await reachable(external.address, Number(new URL(nats.wsUrl!).port))).toBe(false);
      }
      expect(await reachable("127.0.0.1", nats.port)).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - the WebSocket listener serves NATS with JetStream (wsconnect in a child process)", async () => {
    const dataDir = tempDir();
    try {
      await using nats = await startEmbeddedNats({ dataDir, monitoring: true });
      const varz = await monitor<{ server_id: string }>(nats, "/varz");
      const child = spawnFixture("ws-probe.ts", [nats.wsUrl!, nats.credentials!.user, nats.credentials!.pass]);
      const probe = await firstLine<{ serverId: string; jetstream: string }>(child);
      expect(probe.serverId).toBe(varz.server_id);
      expect(probe.jetstream).toBe("io.nats.jetstream.api.v1.account_info_response");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - a nats-server that exits during start (port taken) fails the start at once, with its log", async () => {
    const dirs = [tempDir(), tempDir()];
    try {
      await using first = await startEmbeddedNats({ dataDir: dirs[0], websocket: false });
      // Far below startTimeoutMs: the start must notice the exit, not wait for a ports file.
      const outcome = await within(startEmbeddedNats({ dataDir: dirs[1], websocket: false, port: first.port, startTimeoutMs: 60_000 }), 20_000);
      expect(outcome).not.toBe("pending");
      const error = (outcome as { error?: unknown }).error;
      expect(error).toBeInstanceOf(EmbeddedNatsError);
      expect((error as Error).message).toMatch(/exited during start/);
      expect((error as Error).message).toMatch(/address already in use/);
      expect(alive(first.pid)).toBe(true);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });

  it("embedded - exited resolves when nats-server dies on its own", async () => {
    const dataDir = tempDir();
    try {
      const nats = await startEmbeddedNats({ dataDir, websocket: false });
      process.kill(nats.pid, "SIGKILL");
      expect(await within(nats.exited, 10_000)).not.toBe("pending");
      await nats.stop(); // a no-op now, and it does not hang
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
