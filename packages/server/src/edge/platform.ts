/**
 * The edge platform of the core: NATS over WebSocket (`wsconnect`), no embedded server, no
 * environment: the application passes its servers. Importing this module registers it.
 */
import { createSyncOn, setSyncPlatform, type SyncOptions, type SyncPlatform } from "../core/sync.js";
import type { ExternalNatsOptions } from "../core/connection.js";
import type { Sync } from "../core/types.js";
import { websocketTransport } from "../transport/websocket.js";
import type { NatsConnect } from "../transport/types.js";
import { TidemarkError } from "@tidemark/shared";

/** Options of an edge Sync: the servers are required (`ws://` or `wss://` URLs). */
export interface EdgeSyncOptions extends Omit<SyncOptions, "embedded" | "nats"> {
  nats: ExternalNatsOptions;
  /** Opens the connection. @default wsconnect of @nats-io/nats-core */
  connect?: NatsConnect;
}

const platform: SyncPlatform = {
  transport: websocketTransport(),
  defaultNamespace: () => undefined,
  defaultOptions: () => {
    throw new TidemarkError("INVALID_ARGUMENT", "edge runtimes have no default NATS: call configureSync({ nats: { servers } }) first");
  },
};
setSyncPlatform(platform);

/**
 * Creates a Sync over NATS by WebSocket; it connects on first use. `await sync.close()` releases it.
 * @example const sync = createSync({ nats: { servers: "wss://nats.example" }, namespace: "app" });
 */
export function createSync(options: EdgeSyncOptions): Sync {
  if (!options?.nats) throw new TidemarkError("INVALID_ARGUMENT", "nats.servers is required on edge runtimes (ws:// or wss:// URLs)");
  const { connect, ...rest } = options;
  return createSyncOn(connect ? { ...platform, transport: websocketTransport(connect) } : platform, rest);
}
