/**
 * The `tidemark` command line, parsed and checked in one place. Bad input is an
 * `InvalidArgumentError` naming the flag; main prints it as one human line and exits 2.
 */
import { parseArgs } from "node:util";
import { InvalidArgumentError } from "@tidemark/shared";

export const USAGE = `Usage: tidemark serve [options]
       tidemark --version

  --port N        port to listen on (default 8080, TIDEMARK_PORT; 0 picks a free one)
  --host HOST     address to bind (default 127.0.0.1, TIDEMARK_HOST)
  --data DIR      data directory of the embedded nats-server (default .tidemark, TIDEMARK_DATA_DIR)
  --nats URL      an existing NATS server or cluster, comma-separated (TIDEMARK_NATS_URL)
  --backlog N     listen backlog (default 65535, TIDEMARK_BACKLOG); Linux caps it at
                  net.core.somaxconn: see docs/deployment.md, "Reconnect storms"
  --uws MODULE    serve WebSockets with uWebSockets.js instead of ws: the name or path of a
                  native build for this Node (TIDEMARK_UWS); see docs/deployment.md
  --config FILE   ESM module (.mjs/.js) naming the exposed topics, authenticate and authorize
                  (without it: dev mode, one demo topic open to any token)
  -v, --version   print the version of @tidemark/server
  -h, --help      this text
`;

/** What `tidemark serve` runs with, defaults and environment applied. */
export interface ServeArgs {
  port: number;
  hostname: string;
  /** Set: an existing NATS; unset: the embedded nats-server. */
  natsUrl: string | undefined;
  dataDir: string | undefined;
  /** Unset: dev mode. */
  config: string | undefined;
  /** The listen backlog; unset: serveBridge's default. */
  backlog?: number;
  /** Set: the uWebSockets.js module to serve WebSockets with (`serveBridgeUws`). */
  uws?: string;
}

export type CliCommand = { command: "help" } | { command: "version" } | { command: "serve"; args: ServeArgs };

/** Parses `argv` (without node and the script); throws `InvalidArgumentError` on bad input. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliCommand {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (cause) {
    throw new InvalidArgumentError(describeParseError(cause), { cause });
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: "help" };
  if (values.version) return { command: "version" };
  const [command, ...extra] = positionals;
  if (command === undefined) throw new InvalidArgumentError("no command given");
  if (command !== "serve") throw new InvalidArgumentError(`unknown command "${command}"`);
  if (extra.length > 0) throw new InvalidArgumentError(`unexpected argument "${extra[0]}"`);

  const portText = values.port ?? env.TIDEMARK_PORT ?? "8080";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new InvalidArgumentError(`--port must be an integer 0..65535, got "${portText}"${values.port === undefined ? " (TIDEMARK_PORT)" : ""}`);
  }
  const backlogText = values.backlog ?? (env.TIDEMARK_BACKLOG || undefined);
  if (backlogText !== undefined && (!/^\d+$/.test(backlogText) || Number(backlogText) < 1 || Number(backlogText) > 2 ** 31 - 1)) {
    throw new InvalidArgumentError(`--backlog must be a positive integer, got "${backlogText}"${values.backlog === undefined ? " (TIDEMARK_BACKLOG)" : ""}`);
  }
  const uws = values.uws ?? (env.TIDEMARK_UWS || undefined);
  if (uws !== undefined && backlogText !== undefined) {
    throw new InvalidArgumentError("--backlog cannot be set with --uws (uWebSockets.js listens with a backlog of 512, capped by net.core.somaxconn)");
  }
  return {
    command: "serve",
    args: {
      port,
      hostname: values.host ?? env.TIDEMARK_HOST ?? "127.0.0.1",
      natsUrl: values.nats ?? (env.TIDEMARK_NATS_URL || undefined),
      dataDir: values.data ?? env.TIDEMARK_DATA_DIR,
      config: values.config,
      ...(backlogText === undefined ? {} : { backlog: Number(backlogText) }),
      ...(uws === undefined ? {} : { uws }),
    },
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      data: { type: "string" },
      nats: { type: "string" },
      config: { type: "string" },
      backlog: { type: "string" },
      uws: { type: "string" },
      version: { type: "boolean", short: "v" },
      help: { type: "boolean", short: "h" },
    },
  });
}

// node:util's messages are written for programs ("To specify a positional argument starting
// with a '-', place it at the end…"); a person wants the flag that was wrong.
function describeParseError(err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  const quoted = /'([^']+)'/.exec(message ?? "")?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && quoted) return `unknown option ${quoted}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && quoted && /argument missing/.test(message ?? "")) {
    return `option ${quoted.split(" ")[0]} needs a value`;
  }
  const text = message ?? String(err);
  return text.charAt(0).toLowerCase() + text.slice(1);
}
