/**
 * Structured logs through the application's logger: pino's shape, `(fields, msg)` per level and
 * `child(bindings)`. Field names are the bridge's (`connection`, `topic`, `reason`, ...), bound
 * under `component: "tidemark-bridge"`. Runtime-neutral: pino itself is only the CLI's default.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

type LogMethod = (fields: Record<string, unknown>, msg: string) => void;

/** A pino-shaped logger (a pino instance is one). */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  child(bindings: Record<string, unknown>): Logger;
}

/** @deprecated The `(record) => void` logger; still accepted for one release. */
export interface LogRecord {
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}
/** @deprecated Pass a pino-shaped {@link Logger}. */
export type LogFunction = (record: LogRecord) => void;

/** @internal What the bridge's parts call. */
export type Log = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A pino-shaped logger over a `(record) => void` function. */
export function recordLogger(fn: LogFunction, bindings: Record<string, unknown> = {}): Logger {
  const method = (level: LogLevel): LogMethod => (fields, msg) => fn({ level, msg, ...bindings, ...fields });
  return {
    debug: method("debug"),
    info: method("info"),
    warn: method("warn"),
    error: method("error"),
    child: (more) => recordLogger(fn, { ...bindings, ...more }),
  };
}

/** The default on runtimes without the application's logger: the console, fields as an object. */
export const consoleLogger: Logger = recordLogger(({ level, msg, ...fields }) => console[level](msg, fields));

/**
 * @internal The bridge's log function: `logger` (or a record function) bound to the bridge's
 * component, dropping records below `level`. Without `level`, a pino-shaped logger filters by its
 * own level and a record function gets `info` and above.
 */
export function bridgeLog(logger: Logger | LogFunction, level?: LogLevel): Log {
  const isFunction = typeof logger === "function";
  const min = rank[level ?? (isFunction ? "info" : "debug")];
  const child = (isFunction ? recordLogger(logger) : logger).child({ component: "tidemark-bridge" });
  return (lvl, msg, fields = {}) => {
    if (rank[lvl] >= min) child[lvl](fields, msg);
  };
}
