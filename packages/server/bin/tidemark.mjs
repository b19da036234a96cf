#!/usr/bin/env node
// The `tidemark` command. In the workspace (sources present) it runs src/cli/main.ts through
// tsx with the @tidemark/source condition, so no build is needed; an installed package runs
// the built dist/cli/main.js.
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const src = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const dist = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

if (existsSync(src) && process.env.TIDEMARK_CLI_DIST !== "1") {
  const tsx = import.meta.resolve("tsx");
  const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", tsx, src, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
} else {
  await import(dist);
}
