/**
 * The runtime-neutral check: bundles an entry with esbuild (platform neutral, condition
 * `@tidemark/source`) and reports every Node-only thing its import graph reaches — a `node:`
 * module or a Node builtin, `ws`, `@hono/node-server`, `@nats-io/transport-node`, and in the
 * project's own files the globals `process`, `Buffer`, `require`, `__dirname`, `__filename`
 * (found by esbuild's `define`, which replaces free identifiers only: `topic.process()` and a
 * local named `process` are not reported).
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { build, transform } from "esbuild";

export interface Leak {
  /** The file that has it (relative to the working directory, as esbuild names it). */
  file: string;
  what: string;
}

const FORBIDDEN_PACKAGES = ["ws", "@hono/node-server", "@nats-io/transport-node"];
const GLOBALS = ["process", "Buffer", "require", "__dirname", "__filename"];
const SENTINEL = "__TIDEMARK_NODE_ONLY_";

function isNodeOnly(path: string): boolean {
  if (path.startsWith("node:")) return true;
  const root = path.split("/")[0]!;
  if (builtinModules.includes(root)) return true;
  return FORBIDDEN_PACKAGES.some((p) => path === p || path.startsWith(`${p}/`));
}

export interface CheckOptions {
  /**
   * Third-party files allowed to import Node modules, because the runtime provides them
   * (hono's Deno and Bun adapters import node:path for serveStatic).
   */
  allow?: (file: string, path: string) => boolean;
}

/** tweetnacl (nkeys) calls require("crypto") only where `self.crypto` is missing: never on these runtimes. */
const alwaysAllowed = (file: string, path: string) => path === "crypto" && /\/tweetnacl\//.test(file);

/** Node-only imports and globals reachable from `entry`. */
export async function findNodeOnly(entry: string, options: CheckOptions = {}): Promise<Leak[]> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["@tidemark/source"],
    mainFields: ["module", "main"],
    // Left external so that the build finishes and the metafile names them.
    external: ["node:*", ...builtinModules, ...FORBIDDEN_PACKAGES, ...FORBIDDEN_PACKAGES.map((p) => `${p}/*`)],
    logLevel: "silent",
  });
  const leaks: Leak[] = [];
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    const own = !file.includes("node_modules/");
    for (const imp of input.imports) {
      if (!isNodeOnly(imp.path)) continue;
      if (!own && (alwaysAllowed(file, imp.path) || options.allow?.(file, imp.path))) continue;
      leaks.push({ file, what: `imports ${imp.path}` });
    }
    if (own && /\.[cm]?[jt]sx?$/.test(file)) {
      const source = readFileSync(file, "utf8");
      const define = Object.fromEntries(GLOBALS.map((g) => [g, `${SENTINEL}${g}`]));
      const { code } = await transform(source, { loader: file.endsWith("x") ? "tsx" : "ts", define, format: "esm" });
      for (const g of GLOBALS) if (code.includes(`${SENTINEL}${g}`)) leaks.push({ file, what: `uses the global ${g}` });
    }
  }
  return leaks;
}
