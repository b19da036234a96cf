/**
 * The Node platform of the core: TCP NATS, the embedded nats-server, defaults from the
 * environment (TIDEMARK_NATS_URL, TIDEMARK_DATA_DIR, TIDEMARK_NAMESPACE). Importing this module
 * registers it; the Node entry (`@tidemark/server`) and the CLI do.
 */
import { nodeTransport } from "../transport/node.js";
import { createSync, setSyncPlatform, type SyncOptions } from "./sync.js";

/** Options for the process default from the environment. */
export function syncOptionsFromEnv(env: Record<string, string | undefined> = process.env): SyncOptions {
  const url = env.TIDEMARK_NATS_URL;
  return url ? { nats: { servers: url } } : { embedded: { dataDir: env.TIDEMARK_DATA_DIR } };
}

setSyncPlatform({
  transport: nodeTransport,
  defaultNamespace: () => process.env.TIDEMARK_NAMESPACE,
  defaultOptions: () => syncOptionsFromEnv(),
});

export { createSync };
