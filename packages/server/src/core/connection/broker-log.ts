/**
 * The one line each Sync logs when it first connects: which broker it uses (the embedded
 * nats-server and its data directory, or the external servers) and what chose it (the options,
 * TIDEMARK_NATS_URL, or the default), so a process that quietly got a private broker says so.
 * Runtime-neutral: the default writes one line to stderr through `console.error`.
 */

type LogMethod = (fields: Record<string, unknown>, msg: string) => void;

/**
 * The logger a Sync writes to: pino-shaped (`(fields, msg)` per level), so a pino instance or
 * the bridge's `Logger` is one.
 */
export interface SyncLogger {
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
}

/** The default: the message alone, one line on stderr (stdout stays the application's). */
export const stderrLogger: SyncLogger = {
  info: (_fields, msg) => console.error(msg),
  warn: (_fields, msg) => console.error(msg),
  error: (_fields, msg) => console.error(msg),
};

/** Discards everything (`logger: false`). */
export const silentLogger: SyncLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** What chose the broker: the Sync's options, the environment, or the default (embedded). */
export type BrokerSource = "options" | "TIDEMARK_NATS_URL" | "default";

/**
 * A server URL with its credentials masked: `nats://user:pass@h:4222` -> `nats://user:***@h:4222`,
 * a token `nats://tok@h:4222` -> `nats://***@h:4222`.
 */
export function redactServer(server: string): string {
  return server.replace(/^([a-z][a-z0-9+.-]*:\/\/)?([^@/]*)@/i, (_m, scheme: string | undefined, info: string) => {
    const colon = info.indexOf(":");
    return `${scheme ?? ""}${colon >= 0 ? `${info.slice(0, colon)}:***` : "***"}@`;
  });
}

/** The broker a Sync connected to, as its log line reports it. */
export type BrokerInUse =
  | { kind: "embedded"; url: string; dataDir: string | undefined; version: string }
  | { kind: "external"; servers: string[]; version: string };

/** The fields and message of the line. */
export function brokerLine(namespace: string, from: BrokerSource, broker: BrokerInUse): { fields: Record<string, unknown>; msg: string } {
  const base = { component: "tidemark-sync", namespace, from, version: broker.version };
  if (broker.kind === "embedded") {
    const why = from === "default" ? " (no NATS URL configured: set TIDEMARK_NATS_URL or the nats option to use an existing server)" : "";
    return {
      fields: { ...base, broker: "embedded", url: broker.url, dataDir: broker.dataDir },
      msg: `tidemark: namespace "${namespace}" uses the embedded nats-server ${broker.version} at ${broker.url}, data dir ${broker.dataDir ?? "(unknown)"}${why}`,
    };
  }
  const servers = broker.servers.map(redactServer);
  const source = from === "options" ? "the nats option" : from;
  return {
    fields: { ...base, broker: "external", servers },
    msg: `tidemark: namespace "${namespace}" uses NATS at ${servers.join(", ")} (from ${source}), server ${broker.version}`,
  };
}
