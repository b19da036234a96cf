/**
 * `tidemark serve`: runs the bridge over the topic core. Embedded nats-server by default
 * (`--data DIR`), or an existing NATS (`--nats URL`, `TIDEMARK_NATS_URL`). Drains on SIGTERM.
 */
import { parseArgs } from "node:util";
import { createSync } from "../node-sync.js";
import type { SyncOptions } from "../core/sync.js";
import type { Sync } from "../core/types.js";
import { createNodeBridge, serveBridge } from "../bridge/node.js";
import { pino, type Logger as Pino } from "pino";
import { configNamespace, devConfig, loadConfigModule, resolveConfig, type ConfigModule } from "./config.js";
import { devPublishRoute } from "./dev.js";

const USAGE = `Usage: tidemark serve [options]

  --port N        port to listen on (default 8080, TIDEMARK_PORT; 0 picks a free one)
  --host HOST     address to bind (default 127.0.0.1, TIDEMARK_HOST)
  --data DIR      data directory of the embedded nats-server (default .tidemark, TIDEMARK_DATA_DIR)
  --nats URL      an existing NATS server or cluster, comma-separated (TIDEMARK_NATS_URL)
  --config FILE   ESM module naming the exposed topics, authenticate and authorize
                  (without it: dev mode, one demo topic open to any token)
  -h, --help      this text
`;

// Levels as names ("level":"error"), as the CLI logged before pino. The CLI's own lifecycle lines
// (listening, shutting down, stopped) always log at info: operators and supervisors wait for
// "listening". The config's logLevel applies to the bridge's logger.
const cliLogger = (level: string): Pino => pino({ level, formatters: { level: (label) => ({ level: label }) } });
const logger = cliLogger("info");
const log = (level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}) =>
  logger.child({ component: "tidemark-cli" })[level](fields, msg);

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      nats: { type: "string" },
      config: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || positionals[0] !== "serve") {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port ?? process.env.TIDEMARK_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${values.port}`);
  const hostname = values.host ?? process.env.TIDEMARK_HOST ?? "127.0.0.1";
  const natsUrl = values.nats ?? process.env.TIDEMARK_NATS_URL;

  const mod: ConfigModule = values.config ? await loadConfigModule(values.config) : (devConfig as ConfigModule);
  const syncOptions: SyncOptions = {
    namespace: configNamespace(mod),
    ...(natsUrl ? { nats: { servers: natsUrl } } : { embedded: { dataDir: values.data ?? process.env.TIDEMARK_DATA_DIR } }),
  };
  const sync: Sync = createSync(syncOptions);
  await sync.ready();
  const { config, topics } = await resolveConfig(mod, sync);
  if (!values.config) {
    log("warn", "DEV MODE: no --config given. Topic demo.notifications is open to ANY token and any origin; POST /dev/publish publishes to it. Do not expose this server.");
  }
  const bridge = createNodeBridge({
    topics,
    authenticate: config.authenticate,
    sync,
    origins: config.origins,
    cookieName: config.cookieName,
    path: config.path,
    limits: config.limits,
    heartbeatMs: config.heartbeatMs,
    drainSpreadMs: config.drainSpreadMs,
    principalKey: config.principalKey,
    expiresAt: config.expiresAt,
    logger: cliLogger(config.logLevel ?? "info"),
  });
  const app = values.config ? undefined : devPublishRoute(bridge.app, topics[0]!.topic);
  const server = await serveBridge(bridge, { port, hostname, app });
  const nats = await sync.server();
  log("info", "listening", {
    url: server.url,
    ws: `${server.url.replace(/^http/, "ws")}${config.path ?? "/ws"}`,
    nats: natsUrl ?? "embedded",
    // The broker in use: its version, and for the embedded one where it came from, when an
    // acknowledged publish is on disk (fsync or buffered) and where its credentials are.
    natsServer: nats.embedded
      ? { version: nats.version, binary: nats.embedded.binary, durability: nats.embedded.durability, credentials: nats.embedded.credentialsFile }
      : { version: nats.version },
    namespace: sync.namespace,
    topics: topics.map((t) => t.name ?? t.topic.id),
  });

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log("info", "shutting down", { signal });
      resolve();
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  await server.close();
  await sync.close();
  log("info", "stopped");
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log("error", "failed", { error: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code });
    process.exit(1);
  },
);
