/**
 * What a tarball must hold for a user outside the workspace: `exports` that name only files in
 * it (no `@tidemark/source` condition, whose `src` files are not published), and a README whose
 * links work from npm or node_modules (absolute, or to a file in the tarball).
 */
import { run } from "./proc.js";

/** The files of a tarball, without the `package/` prefix. */
async function listing(tarball: string): Promise<Set<string>> {
  const out = await run("tar", ["-tzf", tarball], process.cwd());
  return new Set(out.split("\n").filter(Boolean).map((f) => f.replace(/^package\//, "")));
}

async function read(tarball: string, file: string): Promise<string> {
  return run("tar", ["-xOzf", tarball, `package/${file}`], process.cwd());
}

/** Every file path an `exports` value names. */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).flatMap(targets);
  return [];
}

/** Throws with every problem found in one tarball. */
export async function checkTarball(name: string, tarball: string): Promise<void> {
  const files = await listing(tarball);
  const problems: string[] = [];
  const manifestText = await read(tarball, "package.json");
  if (manifestText.includes("@tidemark/source")) problems.push("package.json still names the @tidemark/source condition");
  const manifest = JSON.parse(manifestText) as { exports?: unknown; publishConfig?: unknown };
  for (const target of targets(manifest.exports)) {
    if (!files.has(target.replace(/^\.\//, ""))) problems.push(`exports names ${target}, which is not in the tarball`);
  }
  if (files.has("README.md")) {
    const readme = await read(tarball, "README.md");
    for (const [, link] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(link!)) continue;
      if (!files.has(link!.split("#")[0]!.replace(/^\.\//, ""))) problems.push(`README links ${link}, which is not in the tarball`);
    }
  } else {
    problems.push("no README.md");
  }
  if (problems.length > 0) throw new Error(`${name} (${tarball}):\n  ${problems.join("\n  ")}`);
}
