/**
 * The Node platform of the core: TCP NATS, the embedded nats-server, defaults from the
 * environment (TIDEMARK_NATS_URL, TIDEMARK_DATA_DIR, TIDEMARK_NAMESPACE). Importing this module
 * registers it for `configureSync()` and the process default; the Node entry
 * (`@tidemark/server`) and the CLI do.
 */
import { nodeTransport } from "../transport/node.js";
import { createSyncOn, setSyncPlatform, type SyncOptions, type SyncPlatform } from "./sync.js";
import type { Sync } from "./types.js";

/** Options for the process default from the environment. */
export function syncOptionsFromEnv(env: Record<string, string | undefined> = process.env): SyncOptions {
  const url = env.TIDEMARK_NATS_URL;
  return url ? { nats: { servers: url } } : { embedded: { dataDir: env.TIDEMARK_DATA_DIR } };
}

const nodePlatform: SyncPlatform = {
  transport: nodeTransport,
  defaultNamespace: () => process.env.TIDEMARK_NAMESPACE,
  defaultOptions: () => syncOptionsFromEnv(),
};
setSyncPlatform(nodePlatform);

/** Creates a Sync that you own; it connects on first use. `await sync.close()` releases it. */
export function createSync(options: SyncOptions = {}): Sync {
  return createSyncOn(nodePlatform, options);
}
