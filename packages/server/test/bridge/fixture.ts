/** Setup of the bridge suites: a nats-server per file, a Sync per test, a bridge on a free port. */
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  createNodeBridge,
  createSync,
  serveBridge,
  type BridgeOptions,
  type BridgeServer,
  type Bridge,
  type Sync,
  type SyncOptions,
  type LogRecord,
} from "../../src/index.js";
import { startTestNats, uniqueNamespace, type TestNats } from "@tidemark/testing";
import { TestClient } from "./client.js";

/** Principals of the suites: a user id, its tenants, and an optional expiry. */
export interface User {
  id: string;
  tenants: string[];
  expiresAt?: number;
}

export interface Running {
  bridge: Bridge;
  server: BridgeServer;
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
  const servers: BridgeServer[] = [];
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
    const server = await serveBridge(bridge, { port: 0, drainGraceMs: 200 });
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
