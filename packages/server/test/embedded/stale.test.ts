import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, findNatsServer, startEmbeddedNats } from "../../src/index.js";
import { renderNatsConfig, stopStaleServer } from "../../src/internal.js";
import { uniqueNamespace } from "@tidemark/testing";
import { alive, gone } from "./fixtures/run.js";

const MiB = 1024 ** 2;

/** Runs `command` through a shell that exits at once, so the process is re-parented (an orphan). */
function startOrphan(command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sh = spawn("/bin/sh", ["-c", `${command} >/dev/null 2>&1 </dev/null & echo $!`], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    sh.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    sh.once("exit", () => (out.trim() ? resolve(Number(out.trim())) : reject(new Error("no pid"))));
  });
}

async function waitFor<T>(what: string, read: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("embedded nats-server stale process", () => {
  it("embedded - a nats-server left behind on the data dir is found by pid file and stopped on the next start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-stale-"));
    const natsDir = join(dataDir, "nats");
    const namespace = uniqueNamespace();
    let stalePid: number | undefined;
    try {
      // What a killed parent leaves: a nats-server on the same pid file and store, no watchdog.
      mkdirSync(natsDir, { recursive: true });
      const conf = join(natsDir, "nats.conf");
      writeFileSync(
        conf,
        renderNatsConfig({ dir: natsDir, maxFileStore: 256 * MiB, maxMemoryStore: 64 * MiB, maxPayload: 8 * MiB, websocket: false, monitoring: false }),
      );
      stalePid = await startOrphan(`"${findNatsServer()}" -c "${conf}"`);
      const url = await waitFor("the stale server's ports file", () => {
        const f = readdirSync(natsDir).find((n) => n.endsWith(".ports"));
        if (!f) return undefined;
        try {
          return (JSON.parse(readFileSync(join(natsDir, f), "utf8")) as { nats: string[] }).nats[0];
        } catch {
          return undefined;
        }
      });
      expect(Number(readFileSync(join(natsDir, "nats-server.pid"), "utf8"))).toBe(stalePid);
      const writer = createSync({ namespace, nats: { servers: url } });
      try {
        await writer.topic<{ n: number }>({ id: "stale.events" }).publish({ data: { n: 1 } });
      } finally {
        await writer.close();
      }

      await using fresh = await startEmbeddedNats({ dataDir, websocket: false });
      expect(await gone(stalePid, 1_000)).toBe(true);
      expect(fresh.pid).not.toBe(stalePid);
      expect(Number(readFileSync(join(natsDir, "nats-server.pid"), "utf8"))).toBe(fresh.pid);

      // The new server owns the store the stale one wrote.
      const reader = createSync({ namespace, nats: { servers: fresh.url, ...fresh.credentials } });
      try {
        const seen: number[] = [];
        for await (const e of reader.topic<{ n: number }>({ id: "stale.events" }).replay()) seen.push(e.data.n);
        expect(seen).toEqual([1]);
      } finally {
        await reader.close();
      }
    } finally {
      if (stalePid !== undefined && alive(stalePid)) process.kill(stalePid, "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - a stale nats-server whose parent never reaps it (a zombie once stopped) does not hang the next start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-stale-"));
    const natsDir = join(dataDir, "nats");
    let parent: number | undefined;
    try {
      mkdirSync(natsDir, { recursive: true });
      const conf = join(natsDir, "nats.conf");
      writeFileSync(
        conf,
        renderNatsConfig({ dir: natsDir, maxFileStore: 256 * MiB, maxMemoryStore: 64 * MiB, maxPayload: 8 * MiB, websocket: false, monitoring: false }),
      );
      // `exec sleep` replaces the shell: the parent of nats-server lives on and never calls wait().
      parent = await startOrphan(`sh -c '"${findNatsServer()}" -c "${conf}" & exec sleep 60'`);
      const stalePid = await waitFor("the stale server's pid file", () => {
        try {
          return Number(readFileSync(join(natsDir, "nats-server.pid"), "utf8")) || undefined;
        } catch {
          return undefined;
        }
      });
      await waitFor("its ports file", () => readdirSync(natsDir).find((n) => n.endsWith(".ports")));

      const started = startEmbeddedNats({ dataDir, websocket: false });
      const timeout = new Promise<"hung">((r) => setTimeout(() => r("hung"), 20_000).unref());
      const fresh = await Promise.race([started, timeout]);
      expect(fresh).not.toBe("hung");
      if (fresh !== "hung") {
        expect(alive(stalePid)).toBe(false);
        await fresh.stop();
      }
    } finally {
      if (parent !== undefined && alive(parent)) process.kill(parent, "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - a pid file naming a process that is not nats-server is discarded, the process left alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-stale-"));
    const other = await startOrphan("sleep 30");
    try {
      writeFileSync(join(dir, "nats-server.pid"), String(other));
      expect(await stopStaleServer(dir)).toBeUndefined();
      expect(alive(other)).toBe(true);
      expect(existsSync(join(dir, "nats-server.pid"))).toBe(false);
    } finally {
      process.kill(other, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
