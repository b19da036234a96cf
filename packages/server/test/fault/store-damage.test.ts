/**
 * One follower's store damaged while it is stopped (issue 29, item 4; Jepsen's file-corruption
 * faults): a 3-node cluster, an R3 topic under one-shot publishers and `follow()` readers; a
 * follower of the stream is stopped, its message block is damaged (bytes flipped in the middle,
 * or the block truncated), and it is started again. Then it is made the stream's leader (step
 * downs until it leads) while publishing goes on, and the stream is read back. Every
 * acknowledged event must still be there, none twice, every reader exact — or a reader must have
 * met a typed error or gap, never a silent skip.
 */
import { describe, it, expect, afterAll } from "vitest";
import { cpSync, mkdtempSync, openSync, readSync, rmSync, statSync, truncateSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "@nats-io/transport-node";
import { monitor, startTestCluster, uniqueNamespace, until, type TestCluster } from "@tidemark/testing";
import { createSync } from "../../src/index.js";
import { decodeCursor, encodeCursor } from "@tidemark/shared";
import { faultTopicOptions } from "./fixture.js";
import { streamLeader } from "./partition-run.js";
import { OneShotLoad } from "./one-shot-load.js";
import { blockFiles } from "./store-files.js";
import type { FaultEvent } from "./partition-workload.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-damage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Flips `count` bytes (XOR 0xff) spread over the middle half of `file`. */
function flipBytes(file: string, count: number): number[] {
  const size = statSync(file).size;
  const fd = openSync(file, "r+");
  const at: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const pos = Math.floor(size / 4 + (size / 2) * (i / count) + Math.random() * 16);
      const b = Buffer.alloc(1);
      readSync(fd, b, 0, 1, pos);
      b[0] = b[0]! ^ 0xff;
      writeSync(fd, b, 0, 1, pos);
      at.push(pos);
    }
  } finally {
    closeSync(fd);
  }
  return at;
}

type StreamState = { node: string; messages?: number; first?: number; last?: number };
async function replicaStates(cluster: TestCluster, stream: string): Promise<StreamState[]> {
  type Jsz = { account_details?: { stream_detail?: { name: string; state?: { messages: number; first_seq: number; last_seq: number } }[] }[] };
  const out: StreamState[] = [];
  for (const n of cluster.nodes) {
    if (!n.server) continue;
    const jsz = await monitor<Jsz>(n.server, "/jsz?accounts=true&streams=true");
    const s = jsz.account_details?.flatMap((a) => a.stream_detail ?? []).find((x) => x.name === stream);
    out.push({ node: n.name, messages: s?.state?.messages, first: s?.state?.first_seq, last: s?.state?.last_seq });
  }
  return out;
}

async function damageRun(kind: "flip" | "truncate", makeLeader = true) {
  // Each phase's start on stderr, so a run that overruns its time says where it stood.
  const started = Date.now();
  const phases: Record<string, number> = {};
  const phase = (name: string) => {
    phases[name] = Date.now() - started;
    console.error(`store-damage ${kind}${makeLeader ? "" : "-follower"}: ${name} at ${phases[name]} ms`);
  };
  await using cluster = await startTestCluster();
  const namespace = uniqueNamespace();
  const sync = createSync({ namespace, nats: { servers: cluster.urls }, requestTimeoutMs: 2_000 });
  const admin = await connect({ servers: cluster.urls });
  try {
    const topic = sync.topic<FaultEvent>(faultTopicOptions(3));
    await topic.publish({ data: { n: -1, p: "warmup" }, tenantId: "warmup" });
    const stream = `TMEV_${namespace}_fault~events`;
    const load = new OneShotLoad(topic, ["a", "b", "c"]);
    load.start({ keyed: 2, unkeyed: 2, pauseMs: 5 });
    await until("events are acknowledged", () => load.acked >= 300, 30_000, 20);

    phase("300 acknowledged");
    const leader = await streamLeader(cluster, stream);
    const victim = (leader + 1) % 3;
    const victimNode = cluster.nodes[victim]!;
    await cluster.stop(victim);
    const blocks = blockFiles(victimNode.dataDir, stream);
    expect(blocks.length).toBeGreaterThan(0);
    const block = blocks[0]!;
    const sizeBefore = statSync(block).size;
    // The stream's store as it was, so a damage the node cannot start with can be tried afresh.
    const streamDir = dirname(dirname(block));
    const pristine = mkdtempSync(join(dir, "pristine-"));
    cpSync(streamDir, pristine, { recursive: true });
    const damageOnce = (): Record<string, unknown> => {
      if (kind === "flip") return { block: block.split("/").at(-1), size: sizeBefore, flipped: flipBytes(block, 8) };
      truncateSync(block, Math.floor(sizeBefore * 0.6));
      return { block: block.split("/").at(-1), size: sizeBefore, truncatedTo: Math.floor(sizeBefore * 0.6) };
    };
    let damage = damageOnce();
    await sleep(500); // publishing goes on with two nodes
    // nats-server 2.15.1 can hang in "Starting restore" on a block with flipped bytes (6 of 20
    // single-server rounds, none started within 120 s; reliability.md): such a start is killed
    // after 20 s, recorded, and the damage made again from the pristine copy (at most 4 times).
    const hungStarts: Record<string, unknown>[] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        await cluster.start(victim);
        break;
      } catch (err) {
        if (!String(err).includes("did not report its ports") || attempt >= 3) throw err;
        hungStarts.push(damage);
        rmSync(streamDir, { recursive: true, force: true });
        cpSync(pristine, streamDir, { recursive: true });
        damage = damageOnce();
      }
    }
    phase("victim started");
    await cluster.ready();
    await sleep(1_000);
    const afterRestart = await replicaStates(cluster, stream);

    // Make the damaged node lead the stream: step down until it does (at most 20 tries).
    let leads = false;
    let stepdowns = 0;
    for (let i = 0; i < 20 && !leads && makeLeader; i++) {
      if ((await streamLeader(cluster, stream)) === victim) {
        leads = true;
        break;
      }
      stepdowns++;
      await admin
        .request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, JSON.stringify({ placement: { preferred: victimNode.name } }), { timeout: 2_000 })
        .catch(() => undefined);
      await sleep(700);
    }
    phase("leader chosen");
    const ackedAtLead = load.acked;
    await until("publishes are acknowledged with the damaged node leading", () => load.acked >= ackedAtLead + 100, 30_000, 20).catch(() => undefined);
    phase("published under that leader");
    await load.stopPublishing();
    phase("publishing stopped");
    const { stored, readErrors } = await load.readBack();
    await load.settle(stored);
    phase("read back, readers settled");
    const replicas = await replicaStates(cluster, stream);
    // Fresh replays while the damaged node leads, whole-topic and per tenant (the shape of a hub
    // follower's backfill and of `follow({ tenantId })`): each must return every stored event or
    // fail with a typed error — never end short without saying so, never hang (20 s bound).
    const countOf = async (tenantId: string | undefined): Promise<number | string> => {
      const signal = AbortSignal.timeout(20_000);
      let got = 0;
      try {
        for await (const e of topic.replay({ tenantId, signal })) if (e.data.p === load.prefix) got++;
        return signal.aborted ? `hung after ${got}` : got;
      } catch (err) {
        return (err as { code?: string }).code ?? (err as Error).name;
      }
    };
    const total = stored.copies.size - (stored.copies.has("warmup--1") ? 1 : 0);
    const replays: (number | string)[] = [];
    for (let i = 0; i < 6; i++) replays.push(await countOf(undefined));
    const tenantReplays: string[] = [];
    let shortTenantReplays = 0;
    for (let i = 0; i < 3; i++) {
      for (const tenantId of load.tenants) {
        const want = stored.sequences.get(tenantId)?.length ?? 0;
        const got = await countOf(tenantId);
        if (typeof got === "number" && got < want) shortTenantReplays++;
        tenantReplays.push(`${got}/${want}`);
      }
    }
    // Short tenant replays (at most 64 sequences: one batched direct get, which any replica may
    // answer) in windows over the stream's first 3,000 sequences, which hold the damaged block
    // (the first and only one, about 1,100 events, when it was damaged): complete or told. Not
    // the whole stream: publishing goes on through hung starts and step-downs, and one run
    // stored 20,129 events, 671 windows.
    phase("replays done");
    // The damaged leader can be slow to answer a stream info (BrokerUnavailableError after the
    // 2 s request timeout, seen once in ten flip runs): a reader told so asks again.
    const head = await until("the head is read", () => topic.latestCursor(), 30_000, 500);
    const parts = decodeCursor(head);
    const windows: string[] = [];
    let shortWindowReplays = 0;
    for (let from = 0; from < Math.min(parts.sequence, 3_000); from += 30) {
      const tenantId = load.tenants[(from / 30) % load.tenants.length]!;
      const upTo = Math.min(from + 60, parts.sequence);
      const want = (stored.sequences.get(tenantId) ?? []).filter((q) => q > from && q <= upTo).length;
      const after = from === 0 ? undefined : encodeCursor({ ...parts, sequence: from });
      let got = 0;
      try {
        for await (const e of topic.replay({ tenantId, after, until: encodeCursor({ ...parts, sequence: upTo }), signal: AbortSignal.timeout(20_000) })) if (e.tenantId === tenantId) got++;
        if (got < want) shortWindowReplays++;
        windows.push(got === want ? "ok" : `${from}:${got}/${want}`);
      } catch (err) {
        windows.push(`${from}:${(err as { code?: string }).code ?? (err as Error).name}`);
      }
    }
    phase("window replays done");
    const windowReplays = { count: windows.length, notOk: windows.filter((w) => w !== "ok") };
    const shortReplays = replays.filter((r) => typeof r === "number" && r < total).length;
    const hung = [...replays, ...tenantReplays].filter((r) => String(r).includes("hung")).length;
    const leaderAtEnd = cluster.nodes[await streamLeader(cluster, stream)]!.name;
    const f = { kind, makeLeader, phases, damage, hungStarts, damagedLeads: leads, stepdowns, leaderAtEnd, afterRestart, replicas, total, replays, shortReplays, tenantReplays, shortTenantReplays, windowReplays, shortWindowReplays, hung, ...load.account(stored), readErrors };
    console.log(`FIGURES store-damage-${kind}${makeLeader ? "" : "-follower"} ` + JSON.stringify(f));
    return f;
  } finally {
    await admin.close();
    await sync.close();
  }
}

describe.sequential("fault: a follower's store damaged while it is stopped", () => {
  for (const kind of ["flip", "truncate"] as const) {
    it(`store damage - ${kind === "flip" ? "bytes flipped in" : "truncated"} a follower's message block, the follower restarted and made leader: nothing acknowledged lost or doubled, readers exact or told`, async () => {
      const f = await damageRun(kind);
      expect(f).toMatchObject({ ackedLost: 0, storedTwice: 0, untypedErrors: 0, duplicates: 0, outOfOrder: 0, shortReplays: 0, falseGaps: 0 });
      // A truncated block leaves deleted sequences the damaged leader reports: tenant reads read
      // on elsewhere, complete or told. Flipped bytes leave every sequence in place, but a flip in
      // a record's subject moves that event out of its tenant's subject on the node that now
      // leads: nats-server checks no record's hash on reads, and the leader is the authority a
      // tenant read can ask — replays, windows and the tenant `follow()` readers alike (one run
      // in ten: a reader 115 events short, tenant replays 71 of 703) — so those are measured
      // (reliability.md), not asserted. Whole-topic reads, and so the hub's topic feed, are.
      if (kind === "truncate") {
        expect(f.shortTenantReplays).toBe(0);
        expect(f.shortWindowReplays).toBe(0);
        expect(f.holes).toBe(0);
        expect(f.readersExact).toBe(f.readers);
      }
      expect(f.inDoubtSaidSo).toBe(f.inDoubt);
      // Nothing was removed by retention: a RetentionGapError would be a lie (and a client reset).
      expect([...f.replays, ...f.tenantReplays].filter((r) => String(r).includes("RETENTION_GAP"))).toEqual([]);
      expect(f.hung).toBe(0);
    }, 240_000);
  }

  // The damaged follower stays a follower (a whole replica leads). Its store keeps the damage,
  // and a read's consumer or direct get may be served by it: a tenant read cannot see what that
  // replica skips, so the leader confirms its jumps. Failed before: 1 of 9 tenant replays 41
  // short (truncate); 4 of 9 up to 762 short, 27 of 80 short windows, a follow with 102 holes (flip).
  for (const kind of ["truncate", "flip"] as const) {
    it(`store damage - a ${kind === "flip" ? "bit-flipped" : "truncated"} follower that does not lead: tenant and whole-topic reads complete or told, readers exact, nothing acknowledged lost`, async () => {
      const f = await damageRun(kind, false);
      expect(f).toMatchObject({ ackedLost: 0, storedTwice: 0, untypedErrors: 0, duplicates: 0, outOfOrder: 0, holes: 0, falseGaps: 0, shortReplays: 0, shortTenantReplays: 0, shortWindowReplays: 0, hung: 0 });
      expect(f.readersExact).toBe(f.readers);
      expect([...f.replays, ...f.tenantReplays].filter((r) => String(r).includes("RETENTION_GAP"))).toEqual([]);
    }, 180_000);
  }
});
