import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync, ErrorCode, StorageLimitError } from "../../src/index.js";
import { uniqueNamespace } from "@tidemark/testing";

const MiB = 1024 ** 2;

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("embedded nats-server storage limit", () => {
  it("embedded - a topic whose retention does not fit under max_file_store fails naming the limit, nothing created", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-storage-"));
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir, maxFileStore: 32 * MiB, websocket: false } });
    try {
      const big = sync.topic({ id: "storage.big", retention: { maxBytes: 64 * MiB }, deadLetterRetention: { maxBytes: MiB } });
      const err = await rejection(big.publish({ data: { n: 1 } }));
      expect(err).toBeInstanceOf(StorageLimitError);
      expect(err).toMatchObject({ name: "StorageLimitError", code: ErrorCode.StorageLimit });
      expect((err as Error).message).toContain(String(32 * MiB));
      expect((err as Error).message).toContain("max_file_store");
      expect(await sync.listTopics()).toEqual([]);

      // A topic that fits still works on the same server.
      const small = sync.topic({ id: "storage.small", retention: { maxBytes: 8 * MiB }, deadLetterRetention: { maxBytes: MiB } });
      expect((await small.publish({ data: { n: 1 } })).streamSequence).toBe(1);
      expect((await sync.listTopics()).map((t) => t.id)).toEqual(["storage.small"]);
    } finally {
      await sync.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("embedded - a dead-letter stream that does not fit fails the declaration and leaves no event stream behind", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-storage-"));
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir, maxFileStore: 32 * MiB, websocket: false } });
    try {
      // The event stream alone fits (20 MiB); with its dead-letter stream (20 MiB) it does not.
      const topic = sync.topic({ id: "storage.pair", retention: { maxBytes: 20 * MiB } });
      const err = await rejection(topic.publish({ data: { n: 1 } }));
      expect(err).toBeInstanceOf(StorageLimitError);
      expect((err as Error).message).toContain(String(32 * MiB));
      expect(await sync.listTopics()).toEqual([]);

      // Its reservation was released: 30 MiB + 1 MiB fits only without the 20 MiB left behind.
      const next = sync.topic({ id: "storage.next", retention: { maxBytes: 30 * MiB }, deadLetterRetention: { maxBytes: MiB } });
      expect((await next.publish({ data: { n: 1 } })).streamSequence).toBe(1);
    } finally {
      await sync.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
