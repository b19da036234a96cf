/**
 * The two public surfaces side by side. The rule: the edge entry exports everything the Node
 * entry does except what needs Node (the environment, the embedded nats-server, the Node HTTP
 * server, the CLI config), and adds only its WebSocket transport. Type exports count too. The
 * names both share are listed once, in `src/common.ts`, which both entries re-export whole.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Exported by the Node entry only: each needs Node (process.env, child processes, node:http, files). */
const NODE_ONLY = [
  "syncOptionsFromEnv", // reads process.env
  "startEmbeddedNats", // spawns nats-server
  "EmbeddedNatsError",
  "EmbeddedNats",
  "EmbeddedNatsOptions",
  "Durability", // the embedded server's fsync setting
  "NatsCredentials", // the embedded server's credentials file
  "natsServerVersion", // runs the binary
  "findNatsServer", // searches PATH on disk
  "NatsServerNotFoundError",
  "createNodeBridge", // @hono/node-server and ws
  "serveBridge",
  "ServeBridgeOptions",
  "BridgeServer",
  "serveBridgeUws", // uWebSockets.js, a Node addon
  "ServeBridgeUwsOptions",
  "UwsBridgeServer",
  "UwsModule",
  "UwsWebSocket",
  "defineConfig", // the CLI's config module
  "TidemarkConfig",
  "ConfigTopic",
  "ConfigModule",
];
/** Exported by the edge entry only: NATS over WebSocket, which Node reaches over TCP instead. */
const EDGE_ONLY = ["EdgeSyncOptions", "websocketTransport", "NatsConnect", "NatsTransport"];

/**
 * Names an entry exports. Every export is named in the syntax: the one `export *` allowed is of
 * `common.ts`, the shared list, whose names are read the same way.
 */
function exportsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (!clause && ts.isStringLiteral(statement.moduleSpecifier!) && /(^|\/)common\.js$/.test(statement.moduleSpecifier.text)) {
      const common = join(dirname(file), statement.moduleSpecifier.text.replace(/\.js$/, ".ts"));
      if (common !== join(src, "common.ts")) throw new Error(`${file}: export * of ${common}, not the shared list`);
      names.push(...exportsOf(common));
      continue;
    }
    if (!clause || !ts.isNamedExports(clause)) throw new Error(`${file}: export * hides the public surface`);
    names.push(...clause.elements.map((e) => e.name.text));
  }
  return names.sort();
}

describe("public exports", () => {
  it("public exports - the edge entry is the Node entry minus the Node-only names, plus its WebSocket transport", () => {
    const fromNode = exportsOf(join(src, "index.ts"));
    const fromEdge = exportsOf(join(src, "edge/index.ts"));
    for (const name of NODE_ONLY) expect(fromNode, `Node-only ${name} is exported by the Node entry`).toContain(name);
    const expected = [...fromNode.filter((n) => !NODE_ONLY.includes(n)), ...EDGE_ONLY].sort();
    expect(fromEdge).toEqual(expected);
  });
});
