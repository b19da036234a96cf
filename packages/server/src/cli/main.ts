/**
 * `tidemark serve`: runs the bridge over the topic core. Embedded nats-server by default
 * (`--data DIR`), or an existing NATS (`--nats URL`, `TIDEMARK_NATS_URL`). Drains on SIGTERM.
 */
import { InvalidArgumentError } from "@tidemark/shared";
import { createSync } from "../node-sync.js";
import type { SyncOptions } from "../core/sync.js";
import type { Sync } from "../core/types.js";
import { createNodeBridge, serveBridge } from "../bridge/node/serve.js";
import { serveBridgeUws } from "../bridge/uws/serve.js";
import type { UwsModule } from "../bridge/uws/types.js";
import { loadUwsModule } from "./uws.js";
import { pino, type Logger as Pino } from "pino";
import { parseCli, USAGE } from "./args.js";
import { configNamespace, configHubs, devConfig, loadConfigModule, resolveConfig, type ConfigModule } from "./config.js";
import { devPublishRoute } from "./dev.js";
import { shutdownRequested } from "./shutdown.js";
import { packageVersion } from "./version.js";

// Levels as names ("level":"error"), as the CLI logged before pino. The CLI's own lifecycle lines
// (listening, shutting down, stopped) always log at info: operators and supervisors wait for
// "listening". The config's logLevel applies to the bridge's logger.
const cliLogger = (level: string): Pino => pino({ level, formatters: { level: (label) => ({ level: label }) } });
const logger = cliLogger("info");
const log = (level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}) =>
  logger.child({ component: "tidemark-cli" })[level](fields, msg);

export async function main(argv: string[]): Promise<number> {
  let cli: ReturnType<typeof parseCli>;
  let uws: UwsModule | undefined;
  try {
    cli = parseCli(argv, process.env);
    // Before anything starts: a build that does not load is the operator's typo, not a crash.
    if (cli.command === "serve" && cli.args.uws !== undefined) uws = loadUwsModule(cli.args.uws);
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    // A person typed this: one plain line, not a JSON log record.
    process.stderr.write(`tidemark: ${err.message}\nRun "tidemark --help" for the options.\n`);
    return 2;
  }
  if (cli.command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (cli.command === "version") {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const { port, hostname, natsUrl, dataDir, config: configFile, backlog } = cli.args;
  // Subscribed before the slow start, so a signal during it is a shutdown, not a kill. Before
  // "listening" there is nothing to drain: exit at once (the broker's watchdog stops it with us).
  let listening = false;
  const stopping = shutdownRequested({ log: (msg, fields) => log("info", msg, fields) });
  void stopping.then(() => {
    if (listening) return;
    log("info", "stopped before listening");
    process.exit(0);
  });

  const mod: ConfigModule = configFile ? await loadConfigModule(configFile) : (devConfig as ConfigModule);
  const syncOptions: SyncOptions = {
    namespace: configNamespace(mod),
    hubs: configHubs(mod),
    // The Sync's one "which broker" line as a JSON log line like the CLI's own, not plain stderr.
    logger,
    ...(natsUrl ? { nats: { servers: natsUrl } } : { embedded: { dataDir } }),
  };
  const sync: Sync = createSync(syncOptions);
  await sync.ready();
  const { config, topics } = await resolveConfig(mod, sync);
  if (!configFile) {
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
    // A restarted bridge reads its topics' recent events before its clients come back (issue 27).
    warmHubsMs: config.warmHubsMs ?? 60_000,
    principalKey: config.principalKey,
    expiresAt: config.expiresAt,
    logger: cliLogger(config.logLevel ?? "info"),
  });
  const app = configFile ? undefined : devPublishRoute(bridge.app, topics[0]!.topic);
  const server = uws
    ? await serveBridgeUws(bridge, { uws, port, hostname, app })
    : await serveBridge(bridge, { port, hostname, app, ...(backlog === undefined ? {} : { backlog }) });
  listening = true;
  const nats = await sync.server();
  log("info", "listening", {
    url: server.url,
    ws: `${server.url.replace(/^http/, "ws")}${config.path ?? "/ws"}`,
    nats: natsUrl ?? "embedded",
    websockets: uws ? "uWebSockets.js" : "ws",
    // The broker in use: its version, and for the embedded one where it came from, when an
    // acknowledged publish is on disk (fsync or buffered) and where its credentials are.
    natsServer: nats.embedded
      ? { version: nats.version, binary: nats.embedded.binary, durability: nats.embedded.durability, credentials: nats.embedded.credentialsFile }
      : { version: nats.version },
    namespace: sync.namespace,
    topics: topics.map((t) => t.name ?? t.topic.id),
  });

  await stopping;
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
