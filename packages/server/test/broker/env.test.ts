import { describe, it, expect } from "vitest";
import { createSync, syncOptionsFromEnv } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

describe("broker from the environment", () => {
  it("broker - TIDEMARK_NATS_URL with a comma-separated list connects through the server that is up", async () => {
    await using nats = await startTestNats();
    const down = await startTestNats();
    const deadUrl = down.url;
    await down[Symbol.asyncDispose]();

    const env = { TIDEMARK_NATS_URL: ` ${deadUrl} , ${nats.url} `, TIDEMARK_DATA_DIR: "/nonexistent/never-used" };
    const options = syncOptionsFromEnv(env);
    expect(options.embedded).toBeUndefined();
    // Several rounds: nats.js shuffles the list, so the dead server comes first in some of them.
    for (let round = 0; round < 4; round++) {
      const sync = createSync({ ...options, namespace: uniqueNamespace(), requestTimeoutMs: 2_000 });
      try {
        const topic = sync.topic<{ round: number }>({ id: "env.events" });
        const receipt = await topic.publish({ data: { round } });
        expect(receipt.streamSequence).toBe(1);
        expect(sync.connected).toBe(true);
        const seen: number[] = [];
        for await (const e of topic.replay()) seen.push(e.data.round);
        expect(seen).toEqual([round]);
      } finally {
        await sync.close();
      }
    }
  });

  it("broker - without TIDEMARK_NATS_URL the environment selects the embedded server under TIDEMARK_DATA_DIR", () => {
    expect(syncOptionsFromEnv({ TIDEMARK_DATA_DIR: "/srv/tidemark" })).toEqual({ embedded: { dataDir: "/srv/tidemark" } });
    expect(syncOptionsFromEnv({})).toEqual({ embedded: { dataDir: undefined } });
    expect(syncOptionsFromEnv({ TIDEMARK_NATS_URL: "nats://a:4222,nats://b:4222" })).toEqual({
      nats: { servers: "nats://a:4222,nats://b:4222" },
    });
  });
});
