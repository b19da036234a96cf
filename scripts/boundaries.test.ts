/**
 * The boundaries `pnpm typecheck` and `pnpm lint` keep (docs/architecture.md): a probe file in a
 * package must fail against that package's tsconfig when it uses another runtime's globals, and
 * lint must refuse the imports a layer must not make. Probes are virtual: nothing is written.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Type-checks `source` as if it were `packages/<pkg>/src/__probe__.ts`; returns the messages. */
function typecheckProbe(pkg: string, source: string): string[] {
  const configPath = join(root, "packages", pkg, "tsconfig.json");
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error(`cannot read ${configPath}`);
  const probe = join(root, "packages", pkg, "src", "__probe__.ts");
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => (name === probe ? ts.createSourceFile(name, source, lang) : getSourceFile(name, lang, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === probe || fileExists(name);
  const program = ts.createProgram({ rootNames: [probe], options: config.options, host });
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(probe)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

async function lintProbe(path: string, source: string): Promise<string[]> {
  // The probe is in no tsconfig, so the two type-aware rules are off for it.
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: {
      files: ["**/__probe__.ts"],
      languageOptions: { parserOptions: { project: null } },
      rules: { "@typescript-eslint/no-floating-promises": "off", "@typescript-eslint/no-misused-promises": "off" },
    },
  });
  const [result] = await eslint.lintText(source, { filePath: join(root, path) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? "parse"}: ${m.message}`);
}

const usesProcess = "export const mode = process.env.NODE_ENV;\n";
const usesDocument = "export const title = document.title;\n";

describe("boundaries - types per runtime", { timeout: 60_000 }, () => {
  it("boundaries - client code cannot use Node's process; server code can", () => {
    expect(typecheckProbe("client", usesProcess).join("\n")).toMatch(/Cannot find name 'process'/);
    expect(typecheckProbe("server", usesProcess)).toEqual([]);
  });

  it("boundaries - shared code has neither Node nor DOM; client code has the DOM, server code not", () => {
    expect(typecheckProbe("shared", usesProcess).join("\n")).toMatch(/Cannot find name 'process'/);
    expect(typecheckProbe("shared", usesDocument).join("\n")).toMatch(/Cannot find name 'document'/);
    expect(typecheckProbe("server", usesDocument).join("\n")).toMatch(/Cannot find name 'document'/);
    expect(typecheckProbe("client", usesDocument)).toEqual([]);
  });
});

describe("boundaries - layer imports", { timeout: 60_000 }, () => {
  it("boundaries - client and shared import no Node module and nothing of the server", async () => {
    const nodeImport = 'import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n';
    const serverImport = 'import { createSync } from "@tidemark/server";\nexport const make = createSync;\n';
    expect((await lintProbe("packages/client/src/__probe__.ts", nodeImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect((await lintProbe("packages/client/src/__probe__.ts", serverImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect((await lintProbe("packages/shared/src/__probe__.ts", serverImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect(await lintProbe("packages/server/src/embedded/__probe__.ts", nodeImport)).toEqual([]);
  });

  it("boundaries - the core imports no hub, bridge or process module, and no Node module", async () => {
    const hubImport = 'import { x } from "../hub/index.js";\nexport const y = x;\n';
    expect((await lintProbe("packages/server/src/core/__probe__.ts", hubImport)).join("\n")).toMatch(/no-restricted-imports/);
    const nodeImport = 'import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n';
    expect((await lintProbe("packages/server/src/core/__probe__.ts", nodeImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect((await lintProbe("packages/server/src/hub/__probe__.ts", nodeImport)).join("\n")).toMatch(/no-restricted-imports/);
    // The same from a file of one of the core's job folders (core/read/, core/publish/, ...).
    const deepHubImport = 'import { x } from "../../hub/index.js";\nexport const y = x;\n';
    expect((await lintProbe("packages/server/src/core/read/__probe__.ts", deepHubImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect((await lintProbe("packages/server/src/core/read/__probe__.ts", nodeImport)).join("\n")).toMatch(/no-restricted-imports/);
  });

  it("boundaries - the bridge's Node glue lives in bridge/node/; the rest of bridge/ imports no Node module", async () => {
    const wsImport = 'import { WebSocketServer } from "ws";\nexport const W = WebSocketServer;\n';
    const nodeImport = 'import type { Duplex } from "node:stream";\nexport type D = Duplex;\n';
    for (const probe of [wsImport, nodeImport]) {
      expect(await lintProbe("packages/server/src/bridge/node/__probe__.ts", probe)).toEqual([]);
      expect((await lintProbe("packages/server/src/bridge/__probe__.ts", probe)).join("\n")).toMatch(/no-restricted-imports/);
    }
  });

  it("boundaries - the core imports nothing of the Node-only embedded/; broker/ imports neither of them", async () => {
    // EmbeddedNatsOptions and the version features live in broker/, which both sides import.
    const embeddedImport = 'import type { EmbeddedNatsOptions } from "../embedded/server.js";\nexport type O = EmbeddedNatsOptions;\n';
    expect((await lintProbe("packages/server/src/core/__probe__.ts", embeddedImport)).join("\n")).toMatch(/no-restricted-imports/);
    const brokerImport = 'import type { EmbeddedNatsOptions } from "../broker/embedded-options.js";\nexport type O = EmbeddedNatsOptions;\n';
    expect(await lintProbe("packages/server/src/core/__probe__.ts", brokerImport)).toEqual([]);
    const deepEmbeddedImport = 'import type { EmbeddedNatsOptions } from "../../embedded/server.js";\nexport type O = EmbeddedNatsOptions;\n';
    expect((await lintProbe("packages/server/src/core/connection/__probe__.ts", deepEmbeddedImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect(await lintProbe("packages/server/src/embedded/__probe__.ts", brokerImport)).toEqual([]);
    const coreImport = 'import type { Sync } from "../core/types.js";\nexport type S = Sync;\n';
    expect((await lintProbe("packages/server/src/broker/__probe__.ts", coreImport)).join("\n")).toMatch(/no-restricted-imports/);
    expect((await lintProbe("packages/server/src/broker/__probe__.ts", embeddedImport)).join("\n")).toMatch(/no-restricted-imports/);
  });
});
