/**
 * Publishing while the broker is down (issue 25, item 5): a publish that never reached a broker
 * says so (`maybeStored: false`) and names the cause, well inside its deadline; the first
 * publish after the broker is back does not wait out a request timeout. Real nats-servers,
 * stopped and restarted on the same port and store. Bounds, not timings: each deadline is set
 * far above the bound asserted, so a loaded machine cannot pass a slow path as fast.
 */
import { describe, it, expect } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BrokerUnavailableError, createSync, ErrorCode, InvalidArgumentError, type Sync } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rejection of `p` (undefined if it resolved) and how long it took. */
async function outcome(p: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { err, ms: Math.round(performance.now() - started) };
}

/** A URL where nothing listens (a server was just there). */
async function deadUrl(): Promise<{ url: string; port: number }> {
  const gone = await startTestNats();
  const { url, port } = gone;
  await gone[Symbol.asyncDispose]();
  return { url, port };
}

// Far above every bound asserted below: the old behaviour (waiting these out) fails the bounds.
const publishTimeoutMs = 30_000;
const requestTimeoutMs = 20_000;
const FAST = 10_000;

describe("publishing while the broker is down", () => {
  it("broker - a bad connectWaitMs or logger is refused at createSync, naming the option", () => {
    for (const connectWaitMs of [-1, Number.NaN, Infinity]) {
      expect(() => createSync({ nats: { servers: "nats://127.0.0.1:1" }, connectWaitMs })).toThrow(InvalidArgumentError);
      expect(() => createSync({ nats: { servers: "nats://127.0.0.1:1" }, connectWaitMs })).toThrow(/connectWaitMs/);
    }
    expect(() => createSync({ nats: { servers: "nats://127.0.0.1:1" }, logger: "stderr" as never })).toThrow(/logger/);
  });

  it("broker - never reachable (connection refused): publish fails fast, nothing stored, naming the cause and the address", async () => {
    const { url } = await deadUrl();
    const viaOption = createSync({ namespace: uniqueNamespace(), nats: { servers: url }, publishTimeoutMs, requestTimeoutMs, logger: false });
    const saved = process.env.TIDEMARK_NATS_URL;
    process.env.TIDEMARK_NATS_URL = url;
    const viaEnv = createSync({ namespace: uniqueNamespace(), publishTimeoutMs, requestTimeoutMs, logger: false });
    if (saved === undefined) delete process.env.TIDEMARK_NATS_URL;
    else process.env.TIDEMARK_NATS_URL = saved;
    try {
      for (const sync of [viaOption, viaEnv]) {
        const { err, ms } = await outcome(sync.topic({ id: "down.never" }).publish({ data: 1 }));
        expect(err).toBeInstanceOf(BrokerUnavailableError);
        expect(err).toMatchObject({ code: ErrorCode.BrokerUnavailable, maybeStored: false });
        const message = (err as Error).message;
        expect(message).toContain(url);
        expect(message).toContain("connection refused");
        expect(message).toContain("nothing was stored");
        expect(message).not.toContain("timeout");
        expect(ms).toBeLessThan(FAST);
        expect(sync.connected).toBe(false);
      }
    } finally {
      await viaOption.close();
      await viaEnv.close();
    }
  });

  it("broker - stopped after connecting: publish fails fast with maybeStored false and stores nothing; the first publish after the restart is answered at once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-down-"));
    let sync: Sync | undefined;
    try {
      const first = await startTestNats({ dataDir });
      sync = createSync({ namespace: uniqueNamespace(), nats: { servers: first.url }, publishTimeoutMs, requestTimeoutMs, logger: false });
      const topic = sync.topic<{ n: number }>({ id: "down.stopped" });
      expect((await topic.publish({ data: { n: 1 } })).streamSequence).toBe(1);

      await first.stop(2_000);
      await until("the Sync sees the broker gone", () => !sync!.connected);
      const down: number[] = [];
      for (const n of [-1, -2]) {
        const { err, ms } = await outcome(topic.publish({ data: { n }, idempotencyKey: `down-${n}` }));
        down.push(ms);
        expect(err).toBeInstanceOf(BrokerUnavailableError);
        expect(err).toMatchObject({ maybeStored: false });
        const message = (err as Error).message;
        expect(message).toContain(first.url.replace("nats://", "")); // nats.js names it host:port
        expect(message).toContain("not connected");
        expect(message).toContain("nothing was stored");
        expect(ms).toBeLessThan(FAST);
      }

      await using second = await startTestNats({ dataDir, port: first.port });
      // At once, without waiting for the Sync to see the reconnect: the publish waits for the
      // connection (connectWaitMs) instead of being lost in the client's buffer until a timeout.
      const back = await outcome(topic.publish({ data: { n: 2 } }));
      expect(back.err).toBeUndefined();
      expect(back.ms).toBeLessThan(FAST);
      console.log(JSON.stringify({ publishWhileDownMs: down, firstPublishAfterRestartMs: back.ms }));

      // maybeStored: false was true: the refused events are nowhere, the acknowledged ones are.
      const seen: number[] = [];
      for await (const e of topic.replay()) seen.push(e.data.n);
      expect(seen).toEqual([1, 2]);
      void second;
    } finally {
      await sync?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("broker - a publish made while down waits for the reconnect (up to connectWaitMs) and is stored once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-down-"));
    let sync: Sync | undefined;
    try {
      const first = await startTestNats({ dataDir });
      sync = createSync({ namespace: uniqueNamespace(), nats: { servers: first.url }, publishTimeoutMs, requestTimeoutMs, connectWaitMs: 25_000, logger: false });
      const topic = sync.topic<{ n: number }>({ id: "down.waits" });
      await topic.publish({ data: { n: 1 } });
      await first.stop(2_000);
      await until("the Sync sees the broker gone", () => !sync!.connected);

      const publishing = outcome(topic.publish({ data: { n: 2 } }));
      await new Promise((r) => setTimeout(r, 1_000)); // a dial or two fails meanwhile
      await using second = await startTestNats({ dataDir, port: first.port });
      void second;
      const restarted = performance.now();
      const { err } = await publishing;
      expect(err).toBeUndefined();
      // Answered once the connection is back, not a request timeout later.
      expect(performance.now() - restarted).toBeLessThan(FAST);
      const seen: number[] = [];
      for await (const e of topic.replay()) seen.push(e.data.n);
      expect(seen).toEqual([1, 2]);
    } finally {
      await sync?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
