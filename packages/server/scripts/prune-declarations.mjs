/**
 * After `tsc -p tsconfig.build.json`: deletes every `dist/**\/*.d.ts` that no public entry's
 * declarations reach. `stripInternal` takes `@internal` declarations out of the files users load;
 * the files only internal modules use are then left naming what was stripped, so they go too:
 * what ships is the public declaration graph, and all of it type-checks (docs/deployment.md,
 * "Packages"). The `.js` files stay: only types are pruned. A public declaration that imports
 * a nats.js package fails the build.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const dist = join(root, "dist");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** The `types` target of every export of the published manifest. */
function entries() {
  const exports = manifest.publishConfig?.exports ?? manifest.exports;
  return Object.values(exports).map((target) => join(root, target.types));
}

/** The declaration file a relative specifier of `from` names. */
function resolve(from, specifier) {
  const base = join(dirname(from), specifier);
  for (const file of [base.replace(/\.js$/, ".d.ts"), `${base}.d.ts`, join(base, "index.d.ts")]) if (existsSync(file)) return file;
  throw new Error(`${relative(root, from)} names ${specifier}, which has no declaration file`);
}

const reached = new Set();
const pending = entries();
while (pending.length > 0) {
  const file = pending.pop();
  if (reached.has(file)) continue;
  if (!existsSync(file)) throw new Error(`the export ${relative(root, file)} was not emitted`);
  reached.add(file);
  // `from "…"`, `import("…")` and a bare `import "…"`: every way a declaration file names another.
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:\bfrom|\bimport\s*\(|^import)\s*["']([^"']+)["']/gm)) {
    if (specifier.startsWith(".")) pending.push(resolve(file, specifier));
    // Any nats.js import loads all of nats-core's declarations, which fail under
    // exactOptionalPropertyTypes: public types use transport/types.ts's shapes instead.
    else if (specifier.startsWith("@nats-io/")) throw new Error(`${relative(root, file)} is public and imports ${specifier}: name a type of src/transport/types.ts, or mark the declaration @internal`);
  }
}

let pruned = 0;
for (const name of readdirSync(dist, { recursive: true, encoding: "utf8" })) {
  const file = join(dist, name);
  if (file.endsWith(".d.ts") && !reached.has(file)) {
    rmSync(file);
    pruned += 1;
  }
}
console.log(`declarations: ${reached.size} public, ${pruned} internal pruned`);
