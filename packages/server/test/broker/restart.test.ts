import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { BrokerUnavailableError, createSync, ErrorCode, type Sync } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

/** Polls `ok` until it is true; throws naming `what` after `timeoutMs`. */
async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("broker restart (external NATS)", () => {
  it("broker - a restart on the same port and store: publish and reads fail fast while down, then the Sync reconnects", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-broker-"));
    let sync: Sync | undefined;
    try {
      const first = await startTestNats({ dataDir });
      sync = createSync({ namespace: uniqueNamespace(), nats: { servers: first.url }, requestTimeoutMs: 1_000 });
      const topic = sync.topic<{ n: number }>({ id: "broker.events" });
      expect(sync.connected).toBe(false); // not used yet
      expect((await topic.publish({ data: { n: 1 } })).streamSequence).toBe(1);
      expect(sync.connected).toBe(true);

      await first.stop(2_000);
      await until("the Sync sees the broker gone", () => !sync!.connected);

      const started = Date.now();
      const err = await rejection(topic.publish({ data: { n: -1 }, idempotencyKey: "while-down" }));
      const waited = Date.now() - started;
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect(err).toMatchObject({ name: "BrokerUnavailableError", code: ErrorCode.BrokerUnavailable });
      expect(waited).toBeLessThan(15_000); // bounded: it does not hang until the broker is back
      expect(sync.connected).toBe(false);
      // Reads are bounded the same way.
      expect(await rejection(topic.head())).toBeInstanceOf(BrokerUnavailableError);
      expect(await rejection(topic.latestCursor({ tenantId: "a" }))).toBeInstanceOf(BrokerUnavailableError);
      const replaying = (async () => {
        for await (const _ of topic.replay()) void _;
      })();
      expect(await rejection(replaying)).toBeInstanceOf(BrokerUnavailableError);

      await using second = await startTestNats({ dataDir, port: first.port });
      expect(second.port).toBe(first.port);
      await until("the Sync reconnects", () => sync!.connected);

      const receipt = await topic.publish({ data: { n: 2 } });
      const seen: number[] = [];
      for await (const e of topic.replay()) seen.push(e.data.n);
      // The event published while down was refused to its caller; it may still have been sent
      // from the client's reconnect buffer, so only the acknowledged ones are asserted in order.
      expect(seen.filter((n) => n > 0)).toEqual([1, 2]);
      expect(receipt.streamSequence).toBe(seen.length);
      expect(sync.connected).toBe(true);
    } finally {
      await sync?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("broker - a follow() open across a restart delivers the events published after it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-broker-"));
    let sync: Sync | undefined;
    const ac = new AbortController();
    try {
      const first = await startTestNats({ dataDir });
      sync = createSync({ namespace: uniqueNamespace(), nats: { servers: first.url }, requestTimeoutMs: 1_000 });
      const topic = sync.topic<{ n: number }>({ id: "broker.follow" });
      await topic.publish({ data: { n: 1 } });
      const seen: number[] = [];
      const reading = (async () => {
        for await (const e of topic.follow({ signal: ac.signal })) {
          seen.push(e.data.n);
          if (seen.length === 3) ac.abort();
        }
      })();
      await until("the follower has the first event", () => seen.length === 1);

      await first.stop(2_000);
      await until("the Sync sees the broker gone", () => !sync!.connected);
      await using second = await startTestNats({ dataDir, port: first.port });
      void second;
      await until("the Sync reconnects", () => sync!.connected);
      await topic.publish({ data: { n: 2 } });
      await topic.publish({ data: { n: 3 } });
      await until("the follower has the events published after the restart", () => seen.length === 3, 30_000);
      await reading;
      expect(seen).toEqual([1, 2, 3]);
    } finally {
      ac.abort();
      await sync?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("broker - no broker at the configured URL: the first use fails with BrokerUnavailableError, a later use connects", async () => {
    // A port that was just free: start a server, note its port, stop it.
    const gone = await startTestNats();
    const { url, port } = gone;
    await gone[Symbol.asyncDispose]();
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: url }, requestTimeoutMs: 1_000 });
    try {
      const topic = sync.topic({ id: "broker.none" });
      const err = await rejection(topic.publish({ data: 1 }));
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect((err as Error).message).toContain(url);
      expect(sync.connected).toBe(false);

      await using later = await startTestNats({ port });
      expect(later.url).toBe(url);
      expect((await topic.publish({ data: 2 })).streamSequence).toBe(1);
      expect(sync.connected).toBe(true);
    } finally {
      await sync.close();
    }
  });

  it("broker - a publish whose deadline passes while it is still connecting names the broker it could not reach", async () => {
    // A broker that accepts and never says INFO: each connect gives up after `timeout` (500 ms)
    // naming the URL, and the publish's deadline (2 s) passes during a later connect.
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket.on("error", () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `nats://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: url, timeout: 500 }, requestTimeoutMs: 1_000, publishTimeoutMs: 2_000 });
    try {
      const err = await rejection(sync.topic({ id: "broker.silent" }).publish({ data: 1 }));
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect((err as Error).message).toContain(url);
      expect((err as BrokerUnavailableError).maybeStored).toBe(false);
    } finally {
      await sync.close();
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
