/** Structured logs: one JSON object per line, with a level, a message and fields. */

export type LogLevel = "debug" | "info" | "warn" | "error";
export interface LogRecord {
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}
export type Logger = (record: LogRecord) => void;

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** JSON lines on stdout (errors on stderr), with a timestamp. */
export const jsonLogger: Logger = (record) => {
  const line = JSON.stringify({ time: new Date().toISOString(), ...record });
  if (record.level === "error") console.error(line);
  else console.log(line);
};

/** @internal A logger that drops records below `level`. */
export function leveled(logger: Logger, level: LogLevel): (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => void {
  const min = rank[level];
  return (lvl, msg, fields) => {
    if (rank[lvl] >= min) logger({ level: lvl, msg, component: "tidemark-bridge", ...fields });
  };
}
