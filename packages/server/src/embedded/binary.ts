/** Finds the nats-server binary: TIDEMARK_NATS_SERVER, then PATH, then /usr/sbin. */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { ErrorCode, TidemarkError } from "@tidemark/shared";

/** The nats-server binary could not be found. The message says how to install it. */
export class NatsServerNotFoundError extends TidemarkError {
  constructor(message: string) {
    super(ErrorCode.NatsServerNotFound, message);
    this.name = "NatsServerNotFoundError";
  }
}

const INSTALL_HINT =
  "Install it with `apt-get install nats-server` (Debian/Ubuntu), `brew install nats-server` (macOS), " +
  "or a release binary from the NATS project, or set TIDEMARK_NATS_SERVER to its path.";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Returns the path of nats-server or throws {@link NatsServerNotFoundError}. */
export function findNatsServer(env: Record<string, string | undefined> = process.env): string {
  const explicit = env.TIDEMARK_NATS_SERVER;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new NatsServerNotFoundError(`TIDEMARK_NATS_SERVER=${explicit} is not an executable file. ${INSTALL_HINT}`);
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, "nats-server"))) return join(dir, "nats-server");
  }
  if (executable("/usr/sbin/nats-server")) return "/usr/sbin/nats-server";
  throw new NatsServerNotFoundError(`nats-server was not found on PATH or at /usr/sbin/nats-server. ${INSTALL_HINT}`);
}
