/**
 * Setup of the bridge suites: a nats-server per file, a Sync per test, a bridge on a free port.
 * With TIDEMARK_BRIDGE_RUNTIME=uws the bridge is served by uWebSockets.js (`serveBridgeUws`)
 * instead of `ws`: `pnpm test:uws` runs the suites so.
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import { connect as tcp, type Socket } from "node:net";
import {
  createNodeBridge,
  createSync,
  serveBridge,
  serveBridgeUws,
  type BridgeOptions,
  type BridgeServer,
  type UwsBridgeServer,
  type Bridge,
  type Sync,
  type SyncOptions,
  type LogRecord,
  type ServeBridgeOptions,
} from "../../src/index.js";
import { loadTestUws, startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import type { Hono } from "hono";
import { TestClient } from "./client.js";

/** The runtime the suites serve the bridge on (TIDEMARK_BRIDGE_RUNTIME: "ws", the default, or "uws"). */
export const bridgeRuntime = process.env.TIDEMARK_BRIDGE_RUNTIME === "uws" ? "uws" : "ws";

/**
 * How the WebSocket layer closes a socket whose frame announces more than twice maxFrameBytes
 * (docs/protocol.md): `ws` sends close 1009; uWS drops the connection, which a client sees as 1006.
 */
export const FRAME_CUT_CODE = bridgeRuntime === "uws" ? 1006 : 1009;

/** Serves a bridge on the suites' runtime (a free port and a 200 ms drain unless told). */
export async function serveForTest(bridge: Bridge, options: { port?: number; drainGraceMs?: number; app?: Hono } = {}): Promise<Served> {
  const merged = { port: 0, drainGraceMs: 200, ...options };
  return bridgeRuntime === "uws" ? serveBridgeUws(bridge, { uws: loadTestUws(), ...merged }) : serveBridge(bridge, merged);
}

/** A bridge served by either runtime. */
export type Served = Pick<BridgeServer, "port" | "url" | "close"> & Partial<Pick<BridgeServer, "webSocketServer">> & Partial<Pick<UwsBridgeServer, "sockets">>;

/** Bytes each open socket of `server` has queued for sending. */
export function bufferedAmounts(server: Served): number[] {
  if (server.webSocketServer) return [...server.webSocketServer.clients].map((ws) => ws.bufferedAmount);
  return [...(server.sockets ?? [])].map((ws) => ws.getBufferedAmount());
}

/** Principals of the suites: a user id, its tenants, and an optional expiry. */
export interface User {
  id: string;
  tenants: string[];
  expiresAt?: number;
}

export interface Running {
  bridge: Bridge;
  server: Served;
  /** `ws://127.0.0.1:port/ws` */
  wsUrl: string;
  logs: LogRecord[];
  connect(token: string): Promise<TestClient>;
}

export interface BridgeFixture {
  nats: TestNats;
  sync(options?: SyncOptions): Sync;
  /** Tokens the `authenticate` of `start()` accepts: token -> user. Tests revoke by deleting. */
  tokens: Map<string, User>;
  start(options: Partial<BridgeOptions<User>> & Pick<BridgeOptions<User>, "topics">, sync?: Sync): Promise<Running>;
}

export function useBridgeFixture(): BridgeFixture {
  const syncs: Sync[] = [];
  const servers: Served[] = [];
  const clients: TestClient[] = [];
  const fx = { tokens: new Map<string, User>() } as BridgeFixture;
  beforeAll(async () => {
    fx.nats = await startTestNats();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await Promise.all(syncs.map((s) => s.close()));
    await fx.nats?.[Symbol.asyncDispose]();
  });
  fx.sync = (options = {}) => {
    const s = createSync({ namespace: uniqueNamespace(), ...options, nats: { servers: fx.nats.url } });
    syncs.push(s);
    return s;
  };
  fx.start = async (options, sync) => {
    const logs: LogRecord[] = [];
    const bridge = createNodeBridge<User>({
      authenticate: (token) => fx.tokens.get(token),
      logger: (r) => logs.push(r),
      logLevel: "debug",
      principalKey: (u) => u.id,
      sync,
      ...options,
    });
    const server = await serveForTest(bridge);
    servers.push(server);
    const wsUrl = `ws://127.0.0.1:${server.port}/ws`;
    return {
      bridge,
      server,
      wsUrl,
      logs,
      async connect(token: string) {
        const client = await TestClient.connect(wsUrl, token);
        clients.push(client);
        return client;
      },
    };
  };
  return fx;
}

/** Tenant-based rule of the suites: a user sees its own tenants. */
export const ownTenants = (user: User, request: { tenantId: string | undefined }) =>
  request.tenantId !== undefined && user.tenants.includes(request.tenantId);

/** A bridge on one topic that lets anyone in, served on Node (`serveBridge`, whatever the suites' runtime) with `options`. */
export async function servedBridge(nats: TestNats, options: ServeBridgeOptions) {
  const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: nats.url } });
  const topic = sync.topic({ id: "notes" });
  const bridge = createNodeBridge({ sync, topics: [{ topic, authorize: () => true }], authenticate: () => ({}), logger: () => undefined });
  return { sync, bridge, server: await serveBridge(bridge, { port: 0, ...options }) };
}

/** A raw TCP connection to the server that never closes by itself; `closed` resolves when the server ends it (FIN or reset). */
export async function rawConnection(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = tcp({ host: "127.0.0.1", port, allowHalfOpen: true });
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  let received = "";
  socket.on("data", (d: Buffer) => (received += d.toString()));
  socket.on("error", () => undefined);
  // allowHalfOpen: the server's FIN does not close this side, as a peer that never hangs up would not.
  const closed = new Promise<void>((resolve) => {
    socket.once("end", () => resolve());
    socket.once("close", () => resolve());
  });
  return { socket, received: () => received, closed };
}
