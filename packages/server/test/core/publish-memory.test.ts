/**
 * A publish keeps nothing once it has its answer: memory after many publishes on one connection
 * is flat (a publish attempt watches for a dropped connection; that watch must end with it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createSync, type Sync } from "../../src/index.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let nats: TestNats;
let sync: Sync;
beforeAll(async () => {
  nats = await startTestNats({ durability: "buffered" });
  sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url } });
});
afterAll(async () => {
  await sync?.close();
  await nats?.[Symbol.asyncDispose]();
});

async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

describe("publish memory", () => {
  it("publish - memory held after 20,000 more publishes on one connection stays flat", async () => {
    const t = sync.topic<{ n: number }>({ id: "memory" });
    const publishMany = async (count: number) => {
      for (let done = 0; done < count; done += 500) {
        await Promise.all(Array.from({ length: 500 }, (_, i) => t.publish({ data: { n: done + i } })));
      }
    };
    await publishMany(2_000); // warm-up: provisioning, nats.js buffers, JIT
    const before = await heapAfterGc();
    await publishMany(20_000);
    const after = await heapAfterGc();
    // Flat within noise (measured: -60 to +110 KiB; 11.2 MiB when each publish left a reaction on
    // the connection's "lost" promise); a per-publish leftover of even 100 bytes
    // would be 2 MB.
    expect(after - before).toBeLessThan(1.5 * 1024 ** 2);
  }, 120_000);
});
