/**
 * A stream create that nats-server fails in its file store while it removes a deleted stream's
 * directories. Deleting a stream returns before the broker has removed its directory (2.10+
 * removes it in the background; 2.9 removes the account's directory with its last stream), and a
 * create made meanwhile can fail to make its own ("could not create storage directory ... no such
 * file or directory", told to the client only as "error creating store for stream"). Seen in the
 * model suite (seed 1175954680) and in one of 400 provision-then-destroy rounds under load.
 * Here a file stands where the account's directory goes until the broker has refused once.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { createSync, type Sync } from "../../src/index.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function freshBroker(): Promise<{ nats: TestNats; sync: Sync }> {
  const nats = await startTestNats();
  cleanups.push(() => nats[Symbol.asyncDispose]());
  const sync = createSync({ namespace: uniqueNamespace("store"), nats: { servers: nats.url } });
  cleanups.push(() => sync.close());
  return { nats, sync };
}

/** Resolves once the broker logged a refused stream create. */
async function refusedOnce(nats: TestNats, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!/Stream create failed/.test(nats.logs())) {
    if (Date.now() > end) throw new Error(`the broker logged no failed create:\n${nats.logs()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("provisioning - the broker's store", () => {
  it("provision - a create the broker fails in its store while it removes a deleted stream's directories is tried again, and the topic works", async () => {
    const { nats, sync } = await freshBroker();
    // No stream yet: the account's directory does not exist; a file in its place makes every
    // create fail in the store until it is gone.
    const account = join(nats.dataDir, "nats", "jetstream", "jetstream", "$G");
    writeFileSync(account, "");
    const topic = sync.topic<{ n: number }>({ id: "store.busy" });
    const head = topic.head().then(
      (h) => ({ ok: true as const, h }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    await refusedOnce(nats);
    rmSync(account, { force: true }); // the broker may have removed it after the failure
    const outcome = await head;
    expect(outcome.ok ? "provisioned" : String(outcome.err)).toBe("provisioned");
    const receipt = await topic.publish({ data: { n: 1 }, tenantId: "a" });
    expect(receipt.streamSequence).toBe(1);
  });
});
