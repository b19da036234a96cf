/**
 * The Node platform: TCP NATS, the embedded nats-server, the hubs and the workers, and defaults
 * from the environment (TIDEMARK_NATS_URL, TIDEMARK_DATA_DIR, TIDEMARK_NAMESPACE). The Node entry
 * (`@tidemark/server`) and the CLI export what this module builds; importing it registers
 * nothing anywhere.
 */
import { nodeTransport } from "./transport/node.js";
import { createSyncWith, type DefaultBroker, type SyncOptions, type SyncPlatform } from "./core/sync.js";
import { processDefault } from "./core/default-sync.js";
import type { Sync } from "./core/types.js";
import { hubRegistries } from "./hub/feature.js";
import { workers } from "./process/feature.js";

/**
 * The broker the environment chooses: TIDEMARK_NATS_URL (comma-separated servers), else the
 * embedded server under TIDEMARK_DATA_DIR. `createSync()` uses it when its options name no broker.
 */
export function syncOptionsFromEnv(env: Record<string, string | undefined> = process.env): SyncOptions {
  const url = env.TIDEMARK_NATS_URL;
  return url ? { nats: { servers: url } } : { embedded: { dataDir: env.TIDEMARK_DATA_DIR } };
}

/** The broker when the options name none: TIDEMARK_NATS_URL, else the embedded server. */
function brokerFromEnv(): DefaultBroker {
  const options = syncOptionsFromEnv();
  return { ...options, from: options.nats ? "TIDEMARK_NATS_URL" : "default" };
}

/** @internal */
export const nodePlatform: SyncPlatform = {
  transport: nodeTransport,
  defaultNamespace: () => process.env.TIDEMARK_NAMESPACE,
  // Read at createSync(), not at import: options > TIDEMARK_NATS_URL > embedded.
  defaultBroker: brokerFromEnv,
  hubs: hubRegistries,
  workers,
};

/**
 * Creates a Sync that you own; it connects on first use. `await sync.close()` releases it. The
 * broker: `options.nats`, else `options.embedded`, else TIDEMARK_NATS_URL (comma-separated
 * servers), else the embedded nats-server under TIDEMARK_DATA_DIR. At its first connection the
 * Sync logs which one it uses (`options.logger`, default one line on stderr).
 * @example const sync = createSync({ namespace: "app" }); // embedded nats-server, or TIDEMARK_NATS_URL
 */
export function createSync(options: SyncOptions = {}): Sync {
  return createSyncWith(nodePlatform, options);
}

/**
 * The Node entry's process default: from the environment unless `configureSync()` set one.
 * One TCP connection per process (the NATS client keeps one transport factory).
 */
export const { configureSync, getDefaultSync, lazySync } = processDefault(createSync, () => ({}));
