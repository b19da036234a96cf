/**
 * A crash-storm load generator, a child process of its own (so no process nears its open-files
 * limit): opens its share of the run's users as {@link StormClient}s, reports who is resumed and
 * where, records publish-to-delivery latency on request, and counts every event against what
 * was published. Driven over IPC by {@link StormLoad}.
 */
import { StormClient, type StormKind } from "./client.js";
import type { Expected, LoadStatus, StormAccount } from "./load.js";

const send = (msg: unknown) => process.send!(msg);
let clients: StormClient[] = [];
let recording = false;
/** Latency histogram: 1 ms buckets up to 60 s. */
let latency = new Uint32Array(60_001);
const onLatency = (ms: number) => {
  if (recording) latency[Math.min(60_000, Math.max(0, Math.round(ms)))]!++;
};

interface OpenCommand {
  kind: StormKind;
  urls: string[];
  /** Global indices of this process's users. */
  users: number[];
  groups: number;
  addresses: string[];
  /** Clients opened at once before waiting for them to be resumed. */
  wave: number;
}

async function open(c: OpenCommand): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < c.users.length; i += c.wave) {
    const wave = c.users.slice(i, i + c.wave).map((k, j) => {
      const client = new StormClient({
        kind: c.kind,
        urls: c.urls,
        user: `u${k}`,
        group: `g${k % c.groups}`,
        first: k % c.urls.length,
        localAddress: c.addresses.length > 0 ? c.addresses[(i + j) % c.addresses.length] : undefined,
        onLatency,
      });
      client.connect();
      return client;
    });
    clients.push(...wave);
    while (!wave.every((w) => w.ready)) await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

function status(bridges: number): LoadStatus {
  const perBridge = Array.from({ length: bridges }, () => 0);
  let ready = 0;
  let lastReadyAt = 0;
  let reconnects = 0;
  let drains = 0;
  let troubles = 0;
  const closeCodes: Record<string, number> = {};
  const troubleKinds: Record<string, number> = {};
  for (const c of clients) {
    if (c.ready) {
      ready++;
      perBridge[c.bridge]!++;
      lastReadyAt = Math.max(lastReadyAt, c.readyAt);
    }
    reconnects += c.reconnects;
    drains += c.drains;
    for (const [kind, n] of c.troubleKinds) {
      troubleKinds[kind] = (troubleKinds[kind] ?? 0) + n;
      troubles += n;
    }
    for (const [code, n] of c.closeCodes) closeCodes[code] = (closeCodes[code] ?? 0) + n;
  }
  return { clients: clients.length, ready, perBridge, lastReadyAt, reconnects, drains, troubles, troubleKinds, closeCodes };
}

/** p50/p90/max (ms) of open -> welcome and welcome -> ready of the clients ready now whose socket opened after `since`. */
function phases(since: number): { n: number; welcome: number[]; ready: number[] } {
  const welcome: number[] = [];
  const ready: number[] = [];
  for (const c of clients) {
    if (!c.ready || c.connectAt < since || c.welcomeAt === 0) continue;
    welcome.push(c.welcomeAt - c.connectAt);
    ready.push(c.readyAt - c.welcomeAt);
  }
  const q = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return [0.5, 0.9, 1].map((p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN);
  };
  return { n: welcome.length, welcome: q(welcome), ready: q(ready) };
}

function account(expected: Expected): StormAccount {
  const a: StormAccount = { expected: 0, delivered: 0, lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0, troubles: [] };
  for (const c of clients) {
    for (const s of c.subs) {
      const want = (s.id === "p" ? expected.personal : expected.group)[s.tenantId] ?? [];
      const seen = new Set(s.sequences);
      a.expected += want.length;
      a.delivered += s.sequences.length;
      a.doubled += s.sequences.length - seen.size;
      a.outOfOrder += s.outOfOrder;
      const wanted = new Set(want);
      for (const q of want) if (!seen.has(q)) a.lost++;
      for (const q of seen) if (!wanted.has(q)) a.unexpected++;
    }
    for (const [kind, n] of c.troubleKinds) if (kind.startsWith("reset:")) a.resets += n;
    for (const t of c.troubles) if (a.troubles.length < 5) a.troubles.push(t);
  }
  return a;
}

// A command that throws ends this child with an unhandled rejection, which the parent reports.
process.on("message", (msg: Record<string, unknown> & { cmd: string }) => void onMessage(msg));

async function onMessage(msg: Record<string, unknown> & { cmd: string }): Promise<void> {
  switch (msg.cmd) {
    case "open":
      send({ cmd: "opened", ms: await open(msg as unknown as OpenCommand) });
      return;
    case "status":
      send({ cmd: "status", ...status(msg.bridges as number) });
      return;
    case "latency": {
      recording = msg.on as boolean;
      const sparse: [number, number][] = [];
      latency.forEach((n, ms) => n > 0 && sparse.push([ms, n]));
      latency = new Uint32Array(60_001);
      send({ cmd: "latency", sparse });
      return;
    }
    case "phases":
      send({ cmd: "phases", ...phases(msg.since as number) });
      return;
    case "account":
      send({ cmd: "account", ...account(msg.expected as Expected) });
      return;
    case "close":
      for (const c of clients) c.close();
      clients = [];
      send({ cmd: "closed" });
      setTimeout(() => process.exit(0), 50);
      return;
  }
}
// The parent is gone (crashed or killed): do not linger.
process.on("disconnect", () => process.exit(0));
send({ cmd: "ready" });
