/**
 * `pnpm bench [name...]`: runs every `bench/*.bench.ts` (or those whose file name contains one
 * of the arguments) one after another, each in its own tsx child with the source condition,
 * streaming its output. Exits 1 when any of them fails (a missed ratio target is not a failure:
 * each benchmark prints it in its table).
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2).filter((a) => a !== "--");
const all = readdirSync(here).filter((f) => f.endsWith(".bench.ts")).sort();
const chosen = filters.length === 0 ? all : all.filter((f) => filters.some((w) => f.includes(w)));

if (chosen.length === 0) {
  console.error(`no benchmark matches ${filters.join(" ")}; have: ${all.join(", ") || "none"}`);
  process.exit(1);
}

// tsx's CLI, resolved from the workspace root: run it with the current node.
const tsxCli = join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist", "cli.mjs");

function runOne(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsxCli, "--conditions=@tidemark/source", join(here, file)], {
      stdio: "inherit",
      cwd: join(here, ".."),
    });
    // Forward Ctrl-C / termination so the child can stop its nats-server cleanly.
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const failed: string[] = [];
for (const file of chosen) {
  console.log(`\n=== ${file} ===\n`);
  const started = Date.now();
  const code = await runOne(file);
  console.log(`\n=== ${file}: ${code === 0 ? "done" : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(1)} s ===`);
  if (code !== 0) failed.push(file);
}
if (failed.length > 0) {
  console.error(`\n${failed.length} of ${chosen.length} benchmarks failed: ${failed.join(", ")}`);
  process.exit(1);
}
