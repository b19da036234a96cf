/**
 * A store nats-server cannot restore (issue 29, found by the store-damage fault): one byte of a
 * stored record's sequence flipped makes nats-server 2.15.1 hang in "Starting restore" while its
 * memory grows (10 GB in two minutes), never listening. The start must fail with the typed
 * error within its timeout and leave no nats-server behind; before, the watchdog was killed and
 * the server it had started kept running.
 */
import { describe, it, expect } from "vitest";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { EmbeddedNatsError, startEmbeddedNats } from "../../src/index.js";

/** The first message block of stream `name` under `root`. */
function firstBlock(root: string, name: string): string | undefined {
  for (const e of readdirSync(root, { withFileTypes: true })) {
    const p = join(root, e.name);
    if (!e.isDirectory()) continue;
    if (e.name === name) return join(p, "msgs", "1.blk");
    const found = firstBlock(p, name);
    if (found) return found;
  }
  return undefined;
}

/**
 * Flips (XOR 0xff) byte 5 of the sequence field of record `index` in a message block. A record
 * is a 4-byte length (top bit: has headers), an 8-byte sequence, an 8-byte timestamp, ...
 */
function flipSequenceByte(block: string, index: number): void {
  const buf = readFileSync(block);
  let off = 0;
  for (let i = 0; i < index; i++) off += buf.readUInt32LE(off) & 0x7fffffff;
  const fd = openSync(block, "r+");
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, off + 4 + 5);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, off + 4 + 5);
  } finally {
    closeSync(fd);
  }
}

/** True while a process whose command line names `path` runs (a zombie has none). */
function running(path: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(path)) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

describe("embedded store nats-server cannot restore", () => {
  it("embedded - a start that hangs restoring a damaged store fails with EmbeddedNatsError in its timeout and leaves no nats-server running", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-damaged-"));
    try {
      const first = await startEmbeddedNats({ dataDir, websocket: false });
      const nc = await connect({ servers: first.url, ...first.credentials });
      await (await jetstreamManager(nc)).streams.add({ name: "DAMAGED", subjects: ["damaged.>"] });
      const js = jetstream(nc);
      for (let i = 0; i < 1_000; i++) await js.publish(`damaged.${i % 3}`, JSON.stringify({ n: i, pad: "x".repeat(40) }), { msgID: `id-${i}` });
      await nc.close();
      await first.stop();

      const block = firstBlock(dataDir, "DAMAGED");
      expect(block).toBeDefined();
      flipSequenceByte(block!, 377);

      const started = Date.now();
      const err = await startEmbeddedNats({ dataDir, websocket: false, startTimeoutMs: 3_000 }).then(
        async (s) => {
          await s.stop();
          return new Error("the damaged store started");
        },
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(EmbeddedNatsError);
      expect(err.message).toMatch(/did not report its ports/);
      expect(Date.now() - started).toBeLessThan(3_000 + 2_000);
      // Nothing left running on the store (a SIGKILL to the group is immediate; allow reaping).
      const deadline = Date.now() + 2_000;
      while (running(dataDir) && Date.now() < deadline) await sleep(50);
      expect(running(dataDir)).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
