/**
 * The small crash storm of issue 27 (the 100,000-client version is `pnpm bench scaleout`):
 * 2,000 users over two `tidemark serve` bridges on one nats-server, each a raw-protocol client
 * following the documented reconnect policy (full-jitter backoff, drain hints, resume from each
 * subscription's cursor) with a personal and a group hub subscription, in load-generator child
 * processes. Events are published throughout; one bridge is killed (its clients resume on the
 * other), then both are killed and restarted (everyone resumes at once). Every event is
 * accounted for: none lost, none doubled, none out of order.
 */
import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync } from "../../src/index.js";
import {
  StormLoad,
  StormPublisher,
  freePorts,
  startBridgeProcess,
  startTestNats,
  stormConfigSource,
  tidemarkPublishOne,
  uniqueNamespace,
  until,
  writeBridgeConfig,
  type BridgeProcess,
} from "@tidemark/testing";

const USERS = Number(process.env.TIDEMARK_STORM_USERS ?? 2_000);
const GROUPS = 50;
const dir = mkdtempSync(join(tmpdir(), "tidemark-storm-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fault: crash storm", () => {
  it(`crash storm - ${USERS} clients over two bridges: kill -9 of one, then of both and a restart; every client resumes, nothing lost, doubled or out of order`, async () => {
    const started = Date.now();
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const config = writeBridgeConfig(dir, stormConfigSource(namespace));
    const ports = await freePorts(2);
    const bridges: (BridgeProcess | undefined)[] = [undefined, undefined];
    const startBridge = async (i: number) => (bridges[i] = await startBridgeProcess(["--nats", nats.url, "--config", config, "--port", String(ports[i])]));
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    const ac = new AbortController();
    let load: StormLoad | undefined;
    try {
      await Promise.all([startBridge(0), startBridge(1)]);
      const publisher = new StormPublisher(tidemarkPublishOne(sync));
      // Provision both topics before anyone subscribes (a tenant no client has).
      const warm = new StormPublisher(tidemarkPublishOne(sync));
      await warm.run({ users: 1, groups: 1, personalPerSecond: 20, groupPerSecond: 20 }, AbortSignal.timeout(100));
      load = await StormLoad.start({ processes: 2 });
      const subscribeMs = await load.open("tidemark", bridges.map((b) => b!.wsUrl), USERS, GROUPS, { timeoutMs: 60_000 });
      const everyone = (what: string, extra: (s: Awaited<ReturnType<StormLoad["status"]>>) => boolean = () => true) =>
        until(what, async () => {
          const s = await load!.status();
          return s.ready === USERS && extra(s) && s;
        }, 45_000, 200);

      const publishing = publisher.run({ users: USERS, groups: GROUPS, personalPerSecond: 100, groupPerSecond: 20 }, ac.signal);
      await new Promise((r) => setTimeout(r, 1_500));

      // One bridge dies: its clients resume on the other.
      const killOneAt = Date.now();
      await bridges[0]!.kill();
      const afterOne = await everyone("the killed bridge's clients are resumed on the other", (s) => s.perBridge[1] === USERS);
      const killOneMs = afterOne.lastReadyAt - killOneAt;
      await startBridge(0);
      await new Promise((r) => setTimeout(r, 1_000));

      // Both die and come back on their ports: everyone resumes at once.
      const killAllAt = Date.now();
      await Promise.all(bridges.map((b) => b!.kill()));
      await new Promise((r) => setTimeout(r, 500));
      await Promise.all([startBridge(0), startBridge(1)]);
      const afterAll_ = await everyone("every client is resumed after the restart", (s) => s.lastReadyAt > killAllAt);
      const killAllMs = afterAll_.lastReadyAt - killAllAt;
      await new Promise((r) => setTimeout(r, 1_000));
      ac.abort();
      await publishing;

      const settled = await until("every client has every acknowledged event", async () => {
        const a = await load!.account(publisher.expected);
        return a.lost === 0 && a;
      }, 20_000, 500).catch(async () => load!.account(publisher.expected));
      const status = await load.status();
      console.log(
        "FIGURES crash-storm " +
          JSON.stringify({ users: USERS, groups: GROUPS, subscribeMs, killOneMs, killAllMs, published: publisher.acked, ...settled, reconnects: status.reconnects, drains: status.drains, totalMs: Date.now() - started }),
      );
      expect(publisher.failed).toBe(0);
      expect(settled.expected).toBeGreaterThan(USERS * 2);
      expect(settled).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
      expect(settled.delivered).toBe(settled.expected);
      expect(killOneMs).toBeLessThan(30_000);
      expect(killAllMs).toBeLessThan(45_000);
    } finally {
      ac.abort();
      await load?.close();
      await Promise.all(bridges.map((b) => b?.kill()));
      await sync.close();
    }
  }, 120_000);
});
