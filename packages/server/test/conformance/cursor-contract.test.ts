/**
 * Model-based conformance of the cursor contract (issue 10): random command lists of publishes
 * (tenant-scoped idempotency keys), retention pressure, destroy and re-create, saved cursors and
 * watermarks, held subscriptions, bridge restarts and idle periods; every resume through
 * `replay`, `follow`, `hub().subscribe` and the bridge must deliver what the model predicts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createSync, type Sync } from "../../src/index.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { commandArbitraries, pastHeadCommands, READERS } from "./commands.js";
import { checkModel, modelSettings, withBrokerLog } from "./run.js";
import { HUB_OPTIONS, System } from "./system.js";
import { World } from "./world.js";

const OPTIONS = { defaultRuns: 30, timeLimitMs: 150_000 };

let nats: TestNats;
let main: Sync;
let other: Sync;

beforeAll(async () => {
  nats = await startTestNats();
  const namespace = uniqueNamespace("model");
  main = createSync({ namespace, nats: { servers: nats.url }, hubs: HUB_OPTIONS });
  other = createSync({ namespace, nats: { servers: nats.url } });
});
afterAll(async () => {
  await main?.close();
  await other?.close();
  await nats?.[Symbol.asyncDispose]();
});

describe("conformance: the cursor contract (model)", () => {
  it(
    "cursor contract - every read path delivers exactly the model's events, and a gap or mismatch exactly when the model has one",
    async () => {
      let run = 0;
      const property = fc.asyncProperty(fc.commands(commandArbitraries, { maxCommands: 12 }), async (commands) => {
        const world = new World(new System(main, other, `m${run++}`));
        try {
          await world.init(READERS);
          await fc.asyncModelRun(() => ({ model: world, real: world }), commands);
        } finally {
          await world.dispose();
        }
      });
      const { runs } = await checkModel("cursor-contract", property, OPTIONS).catch((err: unknown) => {
        throw withBrokerLog(err, nats);
      });
      expect(runs).toBeGreaterThan(0);
    },
    modelSettings(OPTIONS).timeLimitMs + 60_000,
  );

  it("cursor contract - a cursor minted past the head is refused as invalid on every path", async () => {
    const world = new World(new System(main, other, "pasthead"));
    try {
      await world.init(READERS);
      await fc.asyncModelRun(() => ({ model: world, real: world }), pastHeadCommands());
    } catch (err) {
      throw withBrokerLog(err, nats);
    } finally {
      await world.dispose();
    }
  }, 120_000);
});
