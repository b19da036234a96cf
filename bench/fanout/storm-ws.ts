/**
 * The resume storm's floor: a raw `ws` server on `node:http` (the raw-ws fan-out server's
 * stack) that speaks just enough of the Tidemark protocol for the load generator's `resume`:
 * `hello` -> `welcome`; `subscribe` -> `subscribed`, the tenant's missed events as `event`
 * frames, then `caught_up`. No authentication, no JetStream, no hub: the events are an
 * in-memory per-tenant list the orchestrator sends over IPC (the events the bridge replayed),
 * each frame's bytes built once, as the bridge's are. What it costs per client is Node and
 * `ws` themselves: accept, HTTP parse, handshake, the 101, two small frames in and 52 out.
 *
 *   node --import tsx bench/fanout/storm-ws.ts   (driven by bench/fanout.bench.ts over IPC)
 */
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { WebSocketServer, type WebSocket } from "./ws.js";

interface Missed {
  /** Event frames of the tenant, oldest first: the bytes the bridge sends (see bridge/frames.ts). */
  frames: Buffer[];
  /** The last event's cursor: the `caught_up` watermark. */
  cursor: string;
}

const send = (msg: unknown) => process.send!(msg);
/** Tenant -> its missed events; filled by the `events` command before the storm. */
const byTenant = new Map<string, Missed>();
/** The hub id the bridge would give the tenant's (topic, tenant, hub mode) ("h" + base 36). */
const hubOf = new Map<string, string>();
const limits = { maxFrameBytes: 1_048_576, maxSubscriptions: 100, subscribeRatePerSecond: 1_000 };
const principal = "x".repeat(43); // the bridge's is a 43-character hash; none is computed here

function onSubscribe(ws: WebSocket, id: string, tenant: string): void {
  const missed = byTenant.get(tenant);
  const hub = hubOf.get(tenant) ?? "h0";
  // One turn's frames in one writev, as the bridge corks them.
  const socket = (ws as unknown as { _socket: import("node:net").Socket })._socket;
  socket.cork();
  ws.send(JSON.stringify({ type: "subscribed", id, hub, mode: "hub" }));
  for (const frame of missed?.frames ?? []) ws.send(frame, { binary: false });
  ws.send(JSON.stringify({ type: "caught_up", id, cursor: missed?.cursor ?? "" }));
  process.nextTick(() => socket.uncork());
}

const http = createServer();
const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
wss.on("connection", (ws) => {
  ws.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as { type: string; id?: string; tenantId?: string };
    if (frame.type === "hello") {
      ws.send(JSON.stringify({ type: "welcome", v: 1, connectionId: randomUUID(), heartbeatMs: 25_000, limits, principal }));
    } else if (frame.type === "subscribe") onSubscribe(ws, frame.id ?? "", frame.tenantId ?? "");
  });
});
// The backlog serveBridge listens with (the kernel caps it at net.core.somaxconn): the same queue.
await new Promise<void>((r) => http.listen({ port: 0, host: "127.0.0.1", backlog: 65_535 }, r));
const port = (http.address() as { port: number }).port;

process.on("message", (msg: { cmd: string; events?: Record<string, { hub: string; events: { cursor: string }[] }> }) => {
  if (msg.cmd === "events") {
    for (const [tenant, { hub, events }] of Object.entries(msg.events ?? {})) {
      hubOf.set(tenant, hub);
      byTenant.set(tenant, {
        frames: events.map((e) => Buffer.from(`{"type":"event","hub":${JSON.stringify(hub)},"event":${JSON.stringify(e)}}`)),
        cursor: events.at(-1)?.cursor ?? "",
      });
    }
    send({ cmd: "events", tenants: byTenant.size });
  } else if (msg.cmd === "stop") {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
    http.close();
    send({ cmd: "stopped" });
    process.exit(0);
  }
});
// The orchestrator is gone (crashed or killed): do not linger.
process.on("disconnect", () => process.exit(0));
send({ cmd: "ready", port });
