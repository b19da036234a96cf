import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findCycles, packageSources, sourceFiles, valueImports } from "./import-cycles.js";

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

  it("import cycles - no value-import cycle in any package's src", () => {
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

  it("import cycles - type-only imports and exports are not edges", () => {
    const files = tree({
      "a.ts": 'import type { B } from "./b.js";\nimport { type C } from "./c.js";\nexport type A = B | C;',
      "b.ts": 'import { type A } from "./a.js";\nexport type B = A[];',
      "c.ts": 'export type { A } from "./a.js";\nexport type C = string;',
    });
    expect(findCycles(files)).toEqual([]);
    expect(valueImports('import { type X, y } from "./x.js";')).toEqual(["./x.js"]);
  });
});
