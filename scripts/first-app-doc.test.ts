/**
 * docs/first-app.md shows the whole of examples/first-app: each code block that opens with the
 * file's path (`// examples/first-app/...` or `<!-- examples/first-app/... -->`) must be that
 * file as it is, and every file of the example must be shown. The files themselves are
 * type-checked (root tsconfig.json) and run in Chromium (e2e/tests/first-app.spec.ts).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const appDir = join(root, "examples/first-app");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name === "dist" || name === ".tidemark") return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [relative(root, path)];
  });
}

/** The doc's code blocks that name an example file: path -> content. */
function shown(): Map<string, string> {
  const doc = readFileSync(join(root, "docs/first-app.md"), "utf8");
  const blocks = new Map<string, string>();
  for (const [, body] of doc.matchAll(/```[a-z]*\n([\s\S]*?)\n```/g)) {
    const [first, ...rest] = body!.split("\n");
    const path = /^(?:\/\/|<!--) (examples\/first-app\/\S+)(?: -->)?$/.exec(first!)?.[1];
    if (path) blocks.set(path, rest.join("\n"));
  }
  return blocks;
}

describe("docs/first-app.md", () => {
  it("first app doc - shows every file of examples/first-app, each exactly as it is", () => {
    const blocks = shown();
    const all = files(appDir).sort();
    expect([...blocks.keys()].sort()).toEqual(all);
    for (const path of all) expect(blocks.get(path), path).toBe(readFileSync(join(root, path), "utf8").replace(/\n$/, ""));
  });
});
