import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findCycles, imports, packageSources, sourceFiles } from "./import-cycles.js";

const root = resolve(import.meta.dirname, "..");

describe("import cycles", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  function tree(files: Record<string, string>): string[] {
    dir = mkdtempSync(join(tmpdir(), "cycles-"));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return sourceFiles(dir);
  }

  it("import cycles - no import cycle in any package's src, type-only imports counted", () => {
    const cycles = findCycles(packageSources(root).flatMap(sourceFiles));
    expect(cycles.map((c) => c.map((f) => relative(root, f)).join(" -> "))).toEqual([]);
    // It parses every source file of the workspace: seconds on a busy machine.
  }, 60_000);

  it("import cycles - a value cycle through three files is found, with its path", () => {
    const files = tree({
      "a.ts": 'import { b } from "./b.js";\nexport const a = b;',
      "b.ts": 'import { c } from "./sub/c.js";\nexport const b = c;',
      "sub/c.ts": 'import { a } from "../a.js";\nexport const c = () => a;',
    });
    const cycles = findCycles(files);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]!.map((f) => relative(dir!, f))).toHaveLength(4);
    expect(new Set(cycles[0]!.map((f) => relative(dir!, f)))).toEqual(new Set(["a.ts", "b.ts", join("sub", "c.ts")]));
  });

  it("import cycles - a re-export and a folder index count as edges", () => {
    const files = tree({ "a/index.ts": 'export { b } from "../b.js";', "b.ts": 'import "./a/index.js";\nexport const b = 1;' });
    expect(findCycles(files)).toHaveLength(1);
  });

  it("import cycles - type-only imports and exports are edges: a cycle of types is found", () => {
    // A type-only circle vanishes at run time but still ties the files together: none of them
    // can be read, moved or replaced without the others.
    const files = tree({
      "a.ts": 'import type { B } from "./b.js";\nexport type A = B | string;',
      "b.ts": 'import { type C } from "./c.js";\nexport type B = C[];',
      "c.ts": 'export type { A } from "./a.js";\nexport type C = number;',
    });
    const cycles = findCycles(files);
    expect(cycles).toHaveLength(1);
    expect(new Set(cycles[0]!.map((f) => relative(dir!, f)))).toEqual(new Set(["a.ts", "b.ts", "c.ts"]));
    expect(imports('import type { X } from "./x.js";\nimport { type Y, z } from "./y.js";\nexport type { W } from "./w.js";\nimport "pkg";')).toEqual(["./x.js", "./y.js", "./w.js"]);
  });

  it("import cycles - files that share types through a file of their own make no cycle", () => {
    const files = tree({
      "types.ts": "export interface Context { connections: Set<{ close(): void }> }",
      "context.ts": 'import type { Context } from "./types.js";\nexport const make = (): Context => ({ connections: new Set() });',
      "connection.ts": 'import type { Context } from "./types.js";\nimport { make } from "./context.js";\nexport const c: Context = make();',
    });
    expect(findCycles(files)).toEqual([]);
  });
});
