/**
 * The edge platform: NATS over WebSocket (`wsconnect`), the hubs and the workers, no embedded
 * server, no environment: the application passes its servers. The edge entry exports what
 * this module builds; importing it registers nothing anywhere.
 */
import { createSyncWith, type SyncOptions, type SyncPlatform } from "../core/sync.js";
import { processDefault } from "../core/default-sync.js";
import type { ExternalNatsOptions } from "../transport/types.js";
import type { Sync } from "../core/types.js";
import { hubRegistries } from "../hub/feature.js";
import { workers } from "../process/feature.js";
import { websocketTransport } from "../transport/websocket.js";
import type { NatsConnect } from "../transport/types.js";
import { InvalidArgumentError } from "@tidemark/shared";

/** Options of an edge Sync: the servers are required (`ws://` or `wss://` URLs). */
export interface EdgeSyncOptions extends Omit<SyncOptions, "embedded" | "nats"> {
  nats: ExternalNatsOptions;
  /** Opens the connection. @default wsconnect of @nats-io/nats-core */
  connect?: NatsConnect;
}

const platform: SyncPlatform = { transport: websocketTransport(), hubs: hubRegistries, workers };

/**
 * Creates a Sync over NATS by WebSocket; it connects on first use. `await sync.close()` releases it.
 * @example const sync = createSync({ nats: { servers: "wss://nats.example" }, namespace: "app" });
 */
export function createSync(options: EdgeSyncOptions): Sync {
  if (!options?.nats) throw new InvalidArgumentError("nats.servers is required on edge runtimes (ws:// or wss:// URLs)");
  const { connect, ...rest } = options;
  return createSyncWith(connect ? { ...platform, transport: websocketTransport(connect) } : platform, rest);
}

/** The edge entry's process default: there is none until `configureSync()` sets one. */
export const { configureSync, getDefaultSync, lazySync } = processDefault(
  (options) => createSyncWith(platform, options),
  () => {
    throw new InvalidArgumentError("edge runtimes have no default NATS: call configureSync({ nats: { servers } }) first");
  },
);
