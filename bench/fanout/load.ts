/**
 * The load generator of the fan-out benchmark, a process of its own: opens the client
 * connections (Tidemark protocol, raw ws, or Socket.IO), counts deliveries and records the
 * publish-to-delivery latency of each. Driven by the orchestrator over IPC.
 */
import { WebSocket } from "./ws.js";
import { io, type Socket } from "socket.io-client";
import { Histogram, TOPIC, now, tenantOf, type Impl } from "./shared.js";

interface Client {
  tenant: string;
  /** When the socket opened and when it was caught up (ms, `now()`), for the storm's phases. */
  openAt: number;
  caughtUpAt: number;
  /** Loopback source address the socket was opened from (resume uses the same). */
  localAddress?: string;
  cursor?: string;
  events: number;
  close(): void;
}

const send = (msg: unknown) => process.send!(msg);
let clients: Client[] = [];
/** Bridge subscriptions that ended with `unsubscribed` or an `error` frame (should stay 0). */
let failed = 0;
let hist = new Histogram();
let delivered = 0;
let lastAt = 0;
let firstAt = 0;
let target = Infinity;
let onTarget: (() => void) | undefined;

function record(t: number): void {
  const at = now();
  hist.add(at - t);
  delivered++;
  if (firstAt === 0) firstAt = at;
  lastAt = at;
  if (delivered >= target && onTarget) {
    const f = onTarget;
    onTarget = undefined;
    f();
  }
}

/** Opens one client; resolves when it is subscribed (bridge: caught up). */
function open(impl: Impl, port: number, tenant: string, cursor?: string, localAddress?: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client: Client = { tenant, localAddress, cursor, events: 0, openAt: 0, caughtUpAt: 0, close: () => undefined };
    if (impl === "socketio") {
      const socket: Socket = io(`http://127.0.0.1:${port}`, {
        transports: ["websocket"],
        query: { tenant },
        reconnection: false,
        forceNew: true,
      });
      client.close = () => socket.disconnect();
      socket.on("subscribed", () => resolve(client));
      socket.on("event", (frame: string) => {
        client.events++;
        record((JSON.parse(frame) as { event: { data: { t: number } } }).event.data.t);
      });
      socket.on("connect_error", reject);
      return;
    }
    const url = impl === "ws" ? `ws://127.0.0.1:${port}/?tenant=${tenant}` : `ws://127.0.0.1:${port}/ws`;
    const ws = new WebSocket(url, { perMessageDeflate: false, localAddress });
    client.close = () => ws.terminate();
    ws.on("error", reject);
    ws.on("open", () => {
      client.openAt = now();
      if (impl !== "bridge") return;
      ws.send(JSON.stringify({ type: "hello", v: 1, token: `u${tenant}` }));
      ws.send(JSON.stringify({ type: "subscribe", id: "s", topic: TOPIC, tenantId: tenant, mode: "hub", cursor: client.cursor }));
    });
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as {
        type: string;
        cursor?: string;
        event?: { cursor: string; data: { t: number } };
      };
      switch (frame.type) {
        case "event":
          client.events++;
          client.cursor = frame.event!.cursor;
          record(frame.event!.data.t);
          return;
        case "caught_up":
          client.caughtUpAt = now();
          client.cursor = frame.cursor;
          resolve(client);
          return;
        case "subscribed":
          if (impl === "ws") resolve(client);
          return;
        case "ping":
          ws.send('{"type":"pong"}');
          return;
        case "unsubscribed":
        case "error":
          failed++;
          console.error("load: subscription failed", JSON.stringify(frame));
          resolve(client); // counted as failed; do not hang the run
          return;
        case "reset":
          console.error("load: unexpected reset", JSON.stringify(frame));
          return;
      }
    });
  });
}

/** Opens a client, retrying refused or reset connects (as real clients do) a few times. */
async function openRetrying(impl: Impl, port: number, tenant: string, cursor?: string, localAddress?: string): Promise<Client> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await open(impl, port, tenant, cursor, localAddress);
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
    }
  }
}

/** Opens `n` clients; client k is number offset + k * stride of the run (its tenant follows from that). */
async function connectAll(impl: Impl, port: number, n: number, tenants: number, wave: number, offset: number, stride: number, addresses: string[]): Promise<number> {
  const start = now();
  for (let i = 0; i < n; i += wave) {
    const batch = Array.from({ length: Math.min(wave, n - i) }, (_, k) => {
      const index = offset + (i + k) * stride;
      const address = addresses.length > 0 ? addresses[(i + k) % addresses.length] : undefined;
      return openRetrying(impl, port, tenantOf(index, tenants), undefined, address);
    });
    clients.push(...(await Promise.all(batch)));
  }
  return now() - start;
}

// A command that throws ends this child with an unhandled rejection, which the parent reports.
process.on("message", (msg: Record<string, unknown> & { cmd: string }) => void onMessage(msg));

async function onMessage(msg: Record<string, unknown> & { cmd: string }): Promise<void> {
  switch (msg.cmd) {
    case "connect": {
      const ms = await connectAll(
        msg.impl as Impl,
        msg.port as number,
        msg.n as number,
        msg.tenants as number,
        (msg.wave as number) ?? 500,
        (msg.offset as number) ?? 0,
        (msg.stride as number) ?? 1,
        (msg.localAddresses as string[]) ?? [],
      );
      send({ cmd: "connected", ms });
      return;
    }
    case "expect": {
      // counters start now; reply when `count` deliveries arrived (or at the timeout)
      hist = new Histogram();
      delivered = 0;
      lastAt = 0;
      firstAt = 0;
      target = msg.count as number;
      const done = new Promise<void>((r) => (onTarget = r));
      send({ cmd: "expecting" });
      await Promise.race([done, new Promise((r) => setTimeout(r, msg.timeoutMs as number))]);
      onTarget = undefined;
      target = Infinity;
      send({ cmd: "delivered", delivered, firstAt, lastAt, hist: hist.toJSON() });
      return;
    }
    case "disconnect": {
      for (const c of clients) c.close();
      if (!msg.keep) clients = [];
      send({ cmd: "disconnected" });
      return;
    }
    case "resume": {
      // every client reconnects at once with its saved cursor and waits for caught_up
      const saved = clients;
      clients = [];
      hist = new Histogram();
      delivered = 0;
      const start = now();
      const resumed = await Promise.all(
        saved.map((c) => openRetrying("bridge", msg.port as number, c.tenant, c.cursor, c.localAddress)),
      );
      const ms = now() - start;
      clients = resumed;
      const perClient = resumed.map((c) => c.events);
      // phases: the last socket open (connect) and the first and last caught_up, from the start
      let lastOpen = 0;
      let firstCaughtUp = Infinity;
      let lastCaughtUp = 0;
      for (const c of resumed) {
        lastOpen = Math.max(lastOpen, c.openAt - start);
        firstCaughtUp = Math.min(firstCaughtUp, c.caughtUpAt - start);
        lastCaughtUp = Math.max(lastCaughtUp, c.caughtUpAt - start);
      }
      send({ cmd: "resumed", ms, min: Math.min(...perClient), max: Math.max(...perClient), delivered, failed, start, lastOpen, firstCaughtUp, lastCaughtUp });
      return;
    }
    case "close":
      for (const c of clients) c.close();
      send({ cmd: "closed" });
      setTimeout(() => process.exit(0), 50);
      return;
  }
}
// The orchestrator is gone (crashed or killed): do not linger.
process.on("disconnect", () => process.exit(0));
send({ cmd: "ready" });
