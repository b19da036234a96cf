/**
 * Scale-out (issue 27): SCALEOUT_CLIENTS users (default 100,000) over B `tidemark serve`
 * bridges on one nats-server (SCALEOUT_NATS=cluster: the 3-node cluster harness, R3 topics),
 * from L load-generator processes on several 127.0.x.y source addresses, each user a
 * raw-protocol client (@tidemark/testing's storm client: the browser client's reconnect policy)
 * with a hub subscription to its personal tenant of `notifications` and to one of 1,000 group
 * tenants of `groups`. B and L grow past SCALEOUT_BRIDGES / SCALEOUT_LOADGENS so that no process
 * holds more than 60 % of its open-files limit (bridges: even with one of them down).
 *
 * Printed beside the raw `ws` baseline of the same shape (B plain ws servers fanning core NATS
 * to sockets): time to connect and subscribe everyone, server RSS and kernel socket memory per
 * connection, idle CPU per connection-second, p50/p99 publish-to-delivery at a steady load.
 * Then for Tidemark: nats-server memory and JetStream consumers, and the faults of
 * SCALEOUT_FAULTS (kill-one,kill-all,drain) under the same load, every event accounted for.
 *
 *   SCALEOUT_CLIENTS=20000 pnpm bench scaleout
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { createSync } from "@tidemark/server";
import {
  StormLoad,
  StormPublisher,
  quantileOf,
  startTestCluster,
  stormConfigSource,
  tidemarkPublishOne,
  uniqueNamespace,
  until,
  type PublishOne,
  type StormAccount,
  type StormKind,
  type StormRates,
} from "@tidemark/testing";
import { startBenchNats } from "./lib/nats.js";
import { killChildrenOnSignal } from "./lib/children.js";
import { monitorJson, namespaceConsumers } from "./lib/monitor.js";
import { environment } from "./lib/table.js";
import { cpuSeconds } from "./fanout/cpu.js";
import { subjectOf } from "./fanout/shared.js";
import { machineTicks, openFilesLimit, rssBytes, sockstat } from "./scaleout/procfs.js";
import { BridgeFleet, startWsServers } from "./scaleout/sides.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CLIENTS = env("SCALEOUT_CLIENTS", 100_000);
const GROUPS = env("SCALEOUT_GROUPS", 1_000);
/**
 * Each topic feed's backlog (`hubs.feedBacklogBytes`), sized as deployment.md says for resume
 * storms: the events of the longest reconnect window (at 100,000 users a killed bridge's clients
 * come back over 30-45 s, at 1,000 personal events/s of ~700 bytes decoded: ~30 MiB).
 */
const FEED_BACKLOG_MIB = env("SCALEOUT_FEED_BACKLOG_MIB", 64);
const FAULTS = (process.env.SCALEOUT_FAULTS ?? "kill-one,kill-all,drain").split(",").filter(Boolean);
const CLUSTER = process.env.SCALEOUT_NATS === "cluster";
const IDLE_MS = env("SCALEOUT_IDLE_MS", 10_000);
const STEADY_MS = env("SCALEOUT_STEADY_MS", 15_000);
/**
 * The bridges' `heartbeatMs` (unset: the default, 10 s). A diagnosis, not a setting to meet a
 * target with: it tells how much of a run's CPU the heartbeat of its connections is.
 */
const HEARTBEAT_MS = process.env.SCALEOUT_HEARTBEAT_MS ? env("SCALEOUT_HEARTBEAT_MS", 10_000) : undefined;
/** The bridges' `hubs.watermarkIntervalMs` (unset: the default, 60 s); a diagnosis as well. */
const WATERMARK_MS = process.env.SCALEOUT_WATERMARK_MS ? env("SCALEOUT_WATERMARK_MS", 60_000) : undefined;
/** The bridges' `hubs.maxBackfillSequences` (unset: the default, 20,000), which is also how far they warm their feeds; a diagnosis. */
const BACKFILL = process.env.SCALEOUT_BACKFILL ? env("SCALEOUT_BACKFILL", 20_000) : undefined;
/** How long a fault waits for everyone to resume before it is reported as not resumed. */
const FAULT_TIMEOUT_MS = env("SCALEOUT_FAULT_TIMEOUT_MS", 180_000);
const RATES: StormRates = { users: CLIENTS, groups: GROUPS, personalPerSecond: env("SCALEOUT_PERSONAL_RATE", 2_000), groupPerSecond: env("SCALEOUT_GROUP_RATE", 1_000) };
/** Between two progress lines while a fault waits for everyone to resume. */
const PROGRESS_MS = env("SCALEOUT_PROGRESS_MS", 10_000);
const perProcess = Math.floor(openFilesLimit() * 0.6);
const BRIDGES = Math.max(env("SCALEOUT_BRIDGES", 5), Math.ceil(CLIENTS / perProcess) + 1);
const LOADGENS = Math.max(env("SCALEOUT_LOADGENS", 2), Math.ceil(CLIENTS / perProcess));

const sum = (pids: number[], f: (pid: number) => number) => pids.reduce((n, p) => n + f(p), 0);
const coresOf = (c: SideFigures["steadyCores"]) => `${c.servers} / ${c.loadGenerators} / ${c.nats} / ${c.publisher} (machine ${Math.round(c.machineBusy * 100)} % busy)`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SideFigures {
  connectMs: number;
  rssPerConn: number;
  sockPerConn: number;
  idleCpuUs: number;
  p50: number;
  p99: number;
  latencySamples: number;
  /**
   * Cores used over the steady window, per kind of process (where this machine's 2 went), and
   * `machineBusy`: the share of all cores busy meanwhile (/proc/stat: the kernel's and any process's).
   */
  steadyCores: { servers: number; loadGenerators: number; nats: number; publisher: number; machineBusy: number };
}

/** Opens every client against `urls`, then measures memory, idle CPU and latency at the steady rates. */
async function measureSide(kind: StormKind, urls: string[], pids: number[], load: StormLoad, publisher: StormPublisher, natsPids: number[]): Promise<SideFigures> {
  await sleep(2_000);
  const rssBefore = sum(pids, rssBytes);
  const sockBefore = sockstat().memBytes;
  const connectMs = await load.open(kind, urls, CLIENTS, GROUPS);
  console.log(`${kind}: ${CLIENTS} clients connected and subscribed in ${(connectMs / 1000).toFixed(1)} s`);
  await sleep(3_000);
  const rssPerConn = (sum(pids, rssBytes) - rssBefore) / CLIENTS;
  const sockPerConn = (sockstat().memBytes - sockBefore) / CLIENTS;
  const cpu0 = sum(pids, cpuSeconds);
  const t0 = Date.now();
  await sleep(IDLE_MS);
  const idleCpuUs = ((sum(pids, cpuSeconds) - cpu0) * 1e6) / (CLIENTS * ((Date.now() - t0) / 1000));
  await load.latency(true);
  // Where the cores go while the steady load runs: the servers, the load generators, the
  // nats-server and this process (the publisher), all on the same machine.
  const groups = { servers: pids, loadGenerators: load.pids, nats: natsPids };
  const steady0 = Object.fromEntries(Object.entries(groups).map(([k, ps]) => [k, sum(ps, cpuSeconds)]));
  const self0 = process.cpuUsage();
  const machine0 = machineTicks();
  const s0 = Date.now();
  await publisher.run(RATES, AbortSignal.timeout(STEADY_MS));
  const steadyS = (Date.now() - s0) / 1000;
  const selfUsed = process.cpuUsage(self0);
  const machine1 = machineTicks();
  const cores = (k: keyof typeof groups) => +((sum(groups[k], cpuSeconds) - steady0[k]!) / steadyS).toFixed(2);
  const steadyCores = { servers: cores("servers"), loadGenerators: cores("loadGenerators"), nats: cores("nats"), publisher: +((selfUsed.user + selfUsed.system) / 1e6 / steadyS).toFixed(2), machineBusy: +((machine1.busy - machine0.busy) / (machine1.total - machine0.total)).toFixed(2) };
  await sleep(2_000);
  const hist = await load.latency(false);
  const latencySamples = hist.reduce((n, [, c]) => n + c, 0);
  const figures = { connectMs, rssPerConn, sockPerConn, idleCpuUs, p50: quantileOf(hist, 0.5), p99: quantileOf(hist, 0.99), latencySamples, steadyCores };
  console.log(`${kind}: ${JSON.stringify(figures)}`);
  return figures;
}

async function rawSide(natsUrl: string, natsPids: number[]): Promise<SideFigures> {
  const nc = await connect({ servers: natsUrl, name: "scaleout-publisher" });
  const servers = await startWsServers(BRIDGES, natsUrl);
  const load = await StormLoad.start({ processes: LOADGENS });
  try {
    const one: PublishOne = async (_kind, tenantId, n) => {
      const event = { streamSequence: n, publishedAt: Date.now(), data: { n, title: `Event ${n} for ${tenantId}: something happened that you may want to see` } };
      nc.publish(subjectOf(tenantId), JSON.stringify(event));
      return n;
    };
    return await measureSide("ws", servers.urls, servers.pids, load, new StormPublisher(one), natsPids);
  } finally {
    await load.close();
    await servers.close();
    await nc.close();
  }
}

interface FaultFigure {
  fault: string;
  /** From the fault to the last affected client caught up again on every subscription. */
  resumedMs: number;
  /** kill-all: from the kill to every bridge listening again (bridge start-up is part of resumedMs). */
  bridgesBackMs?: number;
  reconnects: number;
  drains: number;
}

/** What the progress lines add beside the clients' status: JetStream API totals, bridge CPU. */
interface Probe {
  monitorUrl: string | undefined;
  pids: () => number[];
  /** The bridges' base URLs (their /metrics). */
  urls?: () => string[];
}

/** JetStream API requests and errors so far (nats-server `/jsz`). */
async function jsApi(monitorUrl: string | undefined): Promise<{ total: number; errors: number }> {
  const jsz = await monitorJson<{ api?: { total?: number; errors?: number } }>(monitorUrl, "/jsz").catch(() => ({ api: undefined }));
  return { total: jsz.api?.total ?? Number.NaN, errors: jsz.api?.errors ?? Number.NaN };
}

/** Waits until every client is resumed, `extra` holds, and someone became ready after `since`. */
async function everyoneResumed(load: StormLoad, since: number, extra: (perBridge: number[]) => boolean, probe?: Probe): Promise<number> {
  let shown = Date.now();
  let api0 = probe ? await jsApi(probe.monitorUrl) : undefined;
  // CPU seconds per bridge pid at the last line: a killed bridge's pid is gone (no reading) and
  // its restart is a new pid that starts from 0, so each line sums the live pids' own growth.
  const cpuAt = new Map<number, number>(probe ? probe.pids().map((p) => [p, cpuSeconds(p)]) : []);
  const cpuGrowth = (pids: number[]) =>
    pids.reduce((n, p) => {
      const now = cpuSeconds(p);
      if (Number.isNaN(now)) return n;
      const grown = now - (cpuAt.get(p) ?? 0);
      cpuAt.set(p, now);
      return n + grown;
    }, 0);
  try {
    const s = await until("every client resumed", async () => {
      const st = await load.status();
      // A stuck run says where everyone is (an overloaded machine churns: heartbeats time out).
      if (Date.now() - shown > PROGRESS_MS) {
        const dt = (Date.now() - shown) / 1000;
        shown = Date.now();
        let extraInfo = "";
        if (probe) {
          const api = await jsApi(probe.monitorUrl);
          const cpu = cpuGrowth(probe.pids());
          const counters = probe.urls ? await bridgeCounters(probe.urls()) : {};
          const short = Object.fromEntries(Object.entries(counters).map(([k, v]) => [k.replace(/^tidemark_|_total/g, ""), Math.round(v * 10) / 10]));
          extraInfo = ` js api +${api.total - api0!.total} (errors +${api.errors - api0!.errors}), bridges cpu ${(cpu / dt).toFixed(2)} cores, ${JSON.stringify(short)}`;
          api0 = api;
        }
        console.log(`  ${Math.round((shown - since) / 1000)} s: ${JSON.stringify(st)}${extraInfo}`);
      }
      return st.ready === CLIENTS && st.lastReadyAt > since && extra(st.perBridge) && st;
    }, FAULT_TIMEOUT_MS, 250);
    return s.lastReadyAt - since;
  } catch {
    console.log(`  not everyone resumed within ${FAULT_TIMEOUT_MS / 1000} s`);
    return Number.NaN;
  }
}

/** The bridges' rejection, reset, error and replay counters (their /metrics), summed by series. */
async function bridgeCounters(urls: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const url of urls) {
    // Bounded: a bridge that takes the connection but does not answer (restarting, starved) left
    // the progress line, and with it the fault's own timeout, waiting forever (100,000 users).
    const text = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.text()).catch(() => "");
    for (const line of text.split("\n")) {
      const m = /^(tidemark_(?:bridge_(?:rejected|resets|errors|replays|subscription_retries|event_loop_stalled_seconds)|hub_(?:covered|cover_reads|cover_read_seconds|fallbacks|subscriber_replays))_total(?:\{[^}]*\})?) ([\d.e+-]+)/.exec(line);
      if (m && Number(m[2]) > 0) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

async function runFaults(fleet: BridgeFleet, load: StormLoad, monitorUrl: string | undefined): Promise<FaultFigure[]> {
  const out: FaultFigure[] = [];
  const probe: Probe = { monitorUrl, pids: () => fleet.pids, urls: () => fleet.procs.map((b) => b.url) };
  for (const fault of FAULTS) {
    const before = await load.status();
    const at = Date.now();
    let resumedMs: number;
    let bridgesBackMs: number | undefined;
    if (fault === "kill-one") {
      await fleet.procs[0]!.kill();
      resumedMs = await everyoneResumed(load, at, (pb) => pb[0] === 0, probe);
      await fleet.restart(0);
    } else if (fault === "kill-all") {
      await Promise.all(fleet.procs.map((b) => b.kill()));
      await Promise.all(fleet.procs.map((_, i) => fleet.restart(i)));
      bridgesBackMs = Date.now() - at;
      resumedMs = await everyoneResumed(load, at, () => true, probe);
    } else if (fault === "drain") {
      const i = Math.min(1, fleet.procs.length - 1);
      await fleet.procs[i]!.stop();
      resumedMs = await everyoneResumed(load, at, (pb) => pb[i] === 0, probe);
      await fleet.restart(i);
    } else throw new Error(`unknown fault ${fault} (kill-one, kill-all, drain)`);
    const after = await load.status();
    out.push({ fault, resumedMs, bridgesBackMs, reconnects: after.reconnects - before.reconnects, drains: after.drains - before.drains });
    console.log(`clients resumed after ${fault}, per load generator (ms: p50/p90/max of open -> welcome, welcome -> ready): ${JSON.stringify(await load.phases(at))}`);
    console.log(`bridges' counters after ${fault}: ${JSON.stringify(await bridgeCounters(fleet.procs.map((b) => b.url)))}`);
    console.log(`fault ${JSON.stringify(out.at(-1))}; troubles so far ${JSON.stringify(after.troubleKinds)}, close codes ${JSON.stringify(after.closeCodes)}`);
    await sleep(3_000);
  }
  return out;
}

interface TidemarkFigures extends SideFigures {
  natsRssMiB: number;
  consumers: number;
  faults: FaultFigure[];
  account: StormAccount;
  published: number;
}

async function tidemarkSide(dir: string): Promise<TidemarkFigures> {
  await using single = CLUSTER ? undefined : await startBenchNats({ monitoring: true });
  await using cluster = CLUSTER ? await startTestCluster() : undefined;
  const natsUrl = cluster?.urls ?? single!.url;
  const natsPids = cluster ? cluster.nodes.map((n) => n.server!.pid) : [single!.pid];
  const monitorUrl = cluster ? cluster.nodes[0]!.server!.monitorUrl : single!.monitorUrl;
  const replicas = CLUSTER ? 3 : 1;
  const namespace = uniqueNamespace("so");
  const sync = createSync({ namespace, nats: { servers: natsUrl } });
  // The load generators' source addresses are few and each opens thousands: the per-address
  // cap on sockets waiting for hello (200) would shed most of a wave; a balancer in front would
  // show the bridge one address for everyone, and is given the same room.
  const limits = "{ maxUnauthenticatedPerAddress: 1000, maxUnauthenticated: 5000 }";
  const fleet = await BridgeFleet.start(BRIDGES, dir, stormConfigSource(namespace, { replicas, limits, hubs: `{ feedBacklogBytes: ${FEED_BACKLOG_MIB * 2 ** 20}${WATERMARK_MS ? `, watermarkIntervalMs: ${WATERMARK_MS}` : ""}${BACKFILL ? `, maxBackfillSequences: ${BACKFILL}` : ""} }`, heartbeatMs: HEARTBEAT_MS }), natsUrl);
  const load = await StormLoad.start({ processes: LOADGENS });
  try {
    const publisher = new StormPublisher(tidemarkPublishOne(sync, replicas));
    // Provision both topics before anyone subscribes (a tenant no client has).
    await new StormPublisher(tidemarkPublishOne(sync, replicas)).run({ users: 1, groups: 1, personalPerSecond: 20, groupPerSecond: 20 }, AbortSignal.timeout(200));
    const side = await measureSide("tidemark", fleet.urls, fleet.pids, load, publisher, natsPids);
    const natsRssMiB = sum(natsPids, rssBytes) / 2 ** 20;
    const ac = new AbortController();
    const publishing = publisher.run(RATES, ac.signal);
    await sleep(1_000);
    // JetStream consumers while events flow (ordered consumers come and go with the hubs).
    const consumers = await namespaceConsumers(cluster ? cluster.nodes.map((n) => n.server?.monitorUrl) : monitorUrl, namespace);
    const faults = await runFaults(fleet, load, monitorUrl);
    ac.abort();
    await publishing;
    const account = await until("every client has every acknowledged event", async () => {
      const a = await load.account(publisher.expected);
      return a.lost === 0 && a;
    }, 120_000, 2_000).catch(() => load.account(publisher.expected));
    return { ...side, natsRssMiB, consumers, faults, account, published: publisher.acked };
  } finally {
    await load.close();
    await fleet.close();
    await sync.close();
  }
}

function verdict(ok: boolean): string {
  return ok ? "ok" : "MISSED";
}

const dir = mkdtempSync(join(tmpdir(), "tidemark-scaleout-"));
// Ctrl-C stops the bridges, load generators and nats-server too (bench/lib/children.ts).
killChildrenOnSignal(() => rmSync(dir, { recursive: true, force: true }));
try {
  console.log(environment());
  console.log(`scale-out: ${CLIENTS} clients, ${GROUPS} groups, ${BRIDGES} bridges, ${LOADGENS} load generators (open files ${openFilesLimit()} per process), nats ${CLUSTER ? "3-node cluster, R3" : "one server"}, faults ${FAULTS.join(",") || "none"}`);
  console.log(`steady load: ${RATES.personalPerSecond} personal events/s + ${RATES.groupPerSecond} group events/s for ${STEADY_MS / 1000} s; idle window ${IDLE_MS / 1000} s; feed backlog ${FEED_BACKLOG_MIB} MiB per topic`);
  const raw = process.env.SCALEOUT_SKIP_WS ? undefined : await (async () => {
    await using nats = await startBenchNats();
    return await rawSide(nats.url, [nats.pid]);
  })();
  const t = await tidemarkSide(dir);
  const f = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));
  const rows: [string, string, string][] = [
    ["connect + subscribe everyone (s)", f(t.connectMs / 1000), f(raw && raw.connectMs / 1000)],
    ["server RSS per connection (KB)", f(t.rssPerConn / 1024, 2), f(raw && raw.rssPerConn / 1024, 2)],
    ["kernel socket memory per connection (KB, sockstat)", f(t.sockPerConn / 1024, 2), f(raw && raw.sockPerConn / 1024, 2)],
    ["idle CPU per connection-second (µs)", f(t.idleCpuUs, 3), f(raw?.idleCpuUs, 3)],
    ["publish-to-delivery p50 (ms)", f(t.p50), f(raw?.p50)],
    ["publish-to-delivery p99 (ms)", f(t.p99), f(raw?.p99)],
    ["deliveries sampled", String(t.latencySamples), String(raw?.latencySamples ?? "-")],
    ["cores during the steady load: servers / load generators / nats-server / publisher", coresOf(t.steadyCores), raw ? coresOf(raw.steadyCores) : "-"],
    ["nats-server RSS (MiB)", f(t.natsRssMiB), "-"],
    ["JetStream consumers (bridges x topics = " + BRIDGES * 2 + ")", String(t.consumers), "-"],
    ...t.faults.map((x): [string, string, string] => [`${x.fault}: all affected resumed (s)${x.bridgesBackMs === undefined ? "" : " [bridges listening again (s)]"}, reconnects, drains`, `${f(x.resumedMs / 1000)}${x.bridgesBackMs === undefined ? "" : ` [${f(x.bridgesBackMs / 1000)}]`}, ${x.reconnects}, ${x.drains}`, "-"]),
    ["events: published / expected deliveries / delivered", `${t.published} / ${t.account.expected} / ${t.account.delivered}`, "-"],
    ["lost / doubled / out of order / unexpected / resets", `${t.account.lost} / ${t.account.doubled} / ${t.account.outOfOrder} / ${t.account.unexpected} / ${t.account.resets}`, "-"],
  ];
  console.log("\n| figure | tidemark | raw ws |\n|---|---|---|");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  const fault = (name: string) => t.faults.find((x) => x.fault === name);
  const clean = t.account.lost === 0 && t.account.doubled === 0 && t.account.outOfOrder === 0;
  const targets: [string, boolean | undefined][] = [
    [`100,000 connections over >= 5 bridges (${CLIENTS} over ${BRIDGES})`, CLIENTS >= 100_000 && BRIDGES >= 5],
    ["all resumed after kill -9 of all bridges < 60 s, 0 lost 0 doubled", fault("kill-all") && fault("kill-all")!.resumedMs < 60_000 && clean],
    ["clients of one killed bridge resumed on the others < 15 s", fault("kill-one") && fault("kill-one")!.resumedMs < 15_000],
    ["p99 <= 250 ms and <= 2x raw ws", t.p99 <= 250 && (raw === undefined || t.p99 <= 2 * raw.p99)],
    ["idle CPU per connection-second <= 2.5 µs", t.idleCpuUs <= 2.5],
    ["server RSS per idle connection <= 4 KB", t.rssPerConn <= 4 * 1024],
    ["JetStream consumers O(bridges x topics)", t.consumers <= BRIDGES * 2],
  ];
  console.log("\ntargets:");
  for (const [name, ok] of targets) console.log(`  ${ok === undefined ? "not run" : verdict(ok)}  ${name}`);
  if (t.account.troubles.length > 0) console.log(`troubles seen: ${JSON.stringify(t.account.troubles)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
