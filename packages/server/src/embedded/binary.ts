/**
 * Finds the nats-server binary, in this order: TIDEMARK_NATS_SERVER, the project's tools
 * directory (`.tools/bin/nats-server`, installed by scripts/install-nats.sh), PATH, /usr/sbin.
 *
 * The tools directory is looked for in every ancestor of this package's own directory (inside
 * the Tidemark workspace: its root; installed under an application's node_modules: the
 * application's root), then in every ancestor of the working directory. The first one found
 * wins.
 */
import { accessSync, constants, realpathSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NatsServerNotFoundError } from "@tidemark/shared";

export { NatsServerNotFoundError };

const INSTALL_HINT =
  "Run scripts/install.sh in the Tidemark workspace (the newest nats-server of Debian's archive into .tools/), " +
  "or install it with `apt-get install nats-server` (Debian/Ubuntu), `brew install nats-server` (macOS), " +
  "or a release binary from the NATS project, or set TIDEMARK_NATS_SERVER to its path.";

/** Where the project-local binary sits below a project root. */
export const TOOLS_BINARY = join(".tools", "bin", "nats-server");

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) return out;
  }
}

/** The directories searched for `.tools/bin/nats-server`, nearest first. */
export function toolsSearchDirs(cwd: string = process.cwd()): string[] {
  const own = dirname(fileURLToPath(import.meta.url));
  return [...new Set([...ancestors(own), ...ancestors(cwd)])];
}

export interface FindNatsServerOptions {
  /** Directories whose `.tools/bin/nats-server` is tried. @default toolsSearchDirs() */
  toolsDirs?: string[];
}

/** Returns the path of nats-server or throws {@link NatsServerNotFoundError}. */
export function findNatsServer(
  env: Record<string, string | undefined> = process.env,
  options: FindNatsServerOptions = {},
): string {
  const explicit = env.TIDEMARK_NATS_SERVER;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new NatsServerNotFoundError(`TIDEMARK_NATS_SERVER=${explicit} is not an executable file. ${INSTALL_HINT}`);
  }
  for (const dir of options.toolsDirs ?? toolsSearchDirs()) {
    if (executable(join(dir, TOOLS_BINARY))) return join(dir, TOOLS_BINARY);
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, "nats-server"))) return join(dir, "nats-server");
  }
  if (executable("/usr/sbin/nats-server")) return "/usr/sbin/nats-server";
  throw new NatsServerNotFoundError(
    `nats-server was not found in a .tools/bin directory, on PATH or at /usr/sbin/nats-server. ${INSTALL_HINT}`,
  );
}

const versions = new Map<string, string>();

/** The version a binary reports (`nats-server --version`), e.g. "2.15.1"; cached per path. */
export function natsServerVersion(binary: string): string {
  const real = realpathSync(binary); // .tools/bin/nats-server is a link that an install moves
  let version = versions.get(real);
  if (version === undefined) {
    const out = execFileSync(real, ["--version"], { encoding: "utf8", timeout: 10_000 });
    version = /v?(\d+\.\d+\.\d+\S*)/.exec(out)?.[1] ?? "0.0.0";
    versions.set(real, version);
  }
  return version;
}
