/**
 * Finds import cycles among TypeScript sources, type-only imports and re-exports counted (files
 * that share types do so through a file of their own). Run: `npx tsx scripts/import-cycles.ts
 * [dir ...]` (default: the `src` folder of every package). `import-cycles.test.ts` runs it as a
 * unit test. Exits 1 and prints one path through each cycle when there is one.
 */
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The .ts files under `dir`, recursively (tests included: they are modules too). */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/**
 * Relative specifiers of the imports and re-exports of one file, `import type` and type-only
 * specifiers included: a circle of types vanishes at run time but still ties its files together.
 */
export function imports(text: string, fileName = "x.ts"): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const node of file.statements) {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out.filter((s) => s.startsWith("."));
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), `${base}.ts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The import cycles (each a list of files, first repeated at the end) among `files`. */
export function findCycles(files: string[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = imports(readFileSync(file, "utf8"), file)
      .map((s) => resolveSpecifier(file, s))
      .filter((t): t is string => t !== undefined);
    graph.set(file, targets);
  }
  // Tarjan's strongly connected components; a component of more than one file (or a file
  // importing itself) holds a cycle, reported as one path through it.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const strongConnect = (v: string): void => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) !== indices.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(pathThrough(graph, new Set(component), v));
  };
  for (const v of graph.keys()) if (!indices.has(v)) strongConnect(v);
  return cycles;
}

/** A shortest path from `start` back to itself inside one component. */
function pathThrough(graph: Map<string, string[]>, component: Set<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = previous.get(x)!) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** The `src` folders of the workspace packages. */
export function packageSources(root: string): string[] {
  const packages = join(root, "packages");
  return readdirSync(packages)
    .map((name) => join(packages, name, "src"))
    .filter((dir) => existsSync(dir));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const dirs = process.argv.length > 2 ? process.argv.slice(2) : packageSources(root);
  const cycles = findCycles(dirs.flatMap(sourceFiles));
  for (const cycle of cycles) console.log(cycle.map((f) => relative(root, f)).join(" -> "));
  process.exitCode = cycles.length > 0 ? 1 : 0;
}

