import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSync } from "../../src/index.js";
import { startTestNats } from "@tidemark/testing";
import { collect, sleep, until } from "./fixture.js";

/** Publishes, retrying while JetStream is still recovering its streams after a restart. */
async function publishSoon(publish: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await publish();
      return;
    } catch (err) {
      if (i === 20 || (err as { code?: string }).code !== "BROKER_UNAVAILABLE") throw err;
      await sleep(250);
    }
  }
}

describe("process and the broker", () => {
  it("process - a worker rides out a broker restart mid-stream: every event before and after it is handled, none dead-lettered", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "tidemark-restart-"));
    let nats = await startTestNats({ dataDir });
    const port = nats.port;
    const sync = createSync({ namespace: "restart", nats: { servers: nats.url } });
    try {
      const topic = sync.topic<number>({ id: "jobs", retention: { maxAgeMs: 3600_000, maxBytes: 16 * 1024 ** 2 } });
      for (let n = 0; n < 100; n++) await topic.publish({ data: n });
      const seen = new Set<number>();
      const attempts: number[] = [];
      const worker = await topic.process(
        { consumer: "steady", start: "earliest", delivery: { maxAttempts: 5, backoffMs: [200], leaseMs: 2_000 } },
        async (e) => {
          await sleep(10);
          seen.add(e.data);
          attempts.push(e.attempt);
        },
      );
      // Kill the broker mid-stream, with events in flight and most still pending.
      await until(() => seen.size >= 20, 10_000, "the first 20");
      const pid = nats.pid;
      await nats.kill();
      await until(() => !sync.connected, 10_000, "the client to notice");
      nats = await startTestNats({ dataDir, port });
      expect(nats.pid).not.toBe(pid);
      await until(() => sync.connected, 20_000, "the reconnect");
      for (let n = 100; n < 120; n++) await publishSoon(() => topic.publish({ data: n }));
      await until(() => seen.size === 120, 30_000, "every event, before and after the restart");
      await sleep(300);
      await worker.stop();
      expect([...seen].sort((a, b) => a - b)).toEqual([...Array(120).keys()]);
      expect(await collect(topic.deadLetters({ consumer: "steady" }).replay())).toEqual([]);
    } finally {
      await sync.close();
      await nats.stop(2_000);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
