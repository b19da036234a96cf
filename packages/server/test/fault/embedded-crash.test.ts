/**
 * kill -9 of the embedded nats-server in the middle of a publishing burst, many rounds (issue 29,
 * item 4; Jepsen's "kill" fault). The Sync's supervisor starts the server again on its port and
 * store; one-shot publishers (keyed and not) and a `follow()` reader per tenant run throughout.
 * With `durability: "fsync"` no acknowledged event may be lost; `"buffered"` is measured the same
 * way (a kill -9 leaves the operating system's page cache alone, so what a power failure would
 * take is not seen here: reliability.md). 6 rounds each in CI; `pnpm test:faults` runs 25.
 */
import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSync } from "../../src/index.js";
import { alive } from "../../src/internal.js";
import { uniqueNamespace, until } from "@tidemark/testing";
import { faultTopicOptions } from "./fixture.js";
import { LONG } from "./partition-run.js";
import { OneShotLoad } from "./one-shot-load.js";
import type { FaultEvent } from "./partition-workload.js";

const ROUNDS = LONG ? 25 : 6;
const dir = mkdtempSync(join(tmpdir(), "tidemark-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.sequential("fault: kill -9 of the embedded nats-server mid-burst", () => {
  for (const durability of ["fsync", "buffered"] as const) {
    it(`crash - ${durability}: ${ROUNDS} kills in the middle of a burst; no acknowledged event lost, none stored twice, readers exact`, async () => {
      const dataDir = join(dir, durability);
      const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir, websocket: false, durability }, requestTimeoutMs: 2_000 });
      try {
        const topic = sync.topic<FaultEvent>(faultTopicOptions(1));
        await topic.publish({ data: { n: -1, p: "warmup" }, tenantId: "warmup" });
        const pidFile = join(dataDir, "nats", "nats-server.pid");
        const pidNow = () => {
          try {
            return Number(readFileSync(pidFile, "utf8"));
          } catch {
            return 0;
          }
        };
        const load = new OneShotLoad(topic, ["a", "b", "c"]);
        load.start({ keyed: 3, unkeyed: 3, pauseMs: 1 });
        const downMs: number[] = [];
        const ackedAtKill: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          // A burst: wait for acknowledgements to flow, then kill at a random point inside it.
          const acked = load.acked;
          await until("the burst is acknowledged", () => load.acked >= acked + 50, 30_000, 5);
          await sleep(Math.random() * 150);
          const pid = pidNow();
          ackedAtKill.push(load.acked);
          const killedAt = Date.now();
          process.kill(pid, "SIGKILL");
          await until("nats-server is gone", () => !alive(pid), 10_000, 10);
          await until("the supervisor started a new nats-server", () => pidNow() !== pid && alive(pidNow()), 30_000, 20);
          const ackedBefore = load.acked;
          await until("publishes are acknowledged again", () => load.acked > ackedBefore, 30_000, 20);
          downMs.push(Date.now() - killedAt);
        }
        await load.stopPublishing();
        const { stored, readErrors } = await load.readBack();
        await load.settle(stored);
        const f = { durability, rounds: ROUNDS, ...load.account(stored), readErrors, downMsMax: Math.max(...downMs), downMsMedian: [...downMs].sort((a, b) => a - b)[downMs.length >> 1] };
        console.log("FIGURES embedded-crash " + JSON.stringify(f));
        expect(f).toMatchObject({ ackedLost: 0, storedTwice: 0, untypedErrors: 0, holes: 0, duplicates: 0, outOfOrder: 0, falseGaps: 0 });
        expect(f.inDoubtSaidSo).toBe(f.inDoubt);
        expect(f.readersExact).toBe(f.readers);
      } finally {
        await sync.close();
      }
    }, LONG ? 600_000 : 120_000);
  }
});
