#!/usr/bin/env node
// The `tidemark` command. In the workspace (sources present) it runs src/cli/main.ts through
// tsx with the @tidemark/source condition, so no build is needed; an installed package runs
// the built dist/cli/main.js.
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { setInterval, clearInterval } from "node:timers";
import { fileURLToPath } from "node:url";

const src = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const dist = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

if (existsSync(src) && process.env.TIDEMARK_CLI_DIST !== "1") {
  const tsx = import.meta.resolve("tsx");
  const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", tsx, src, ...process.argv.slice(2)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  // Started by npm, whose shell dies on SIGTERM: the child watches this wrapper, so the wrapper
  // passes its own parent's exit on (src/cli/shutdown.ts does the same for the real command).
  if (process.env.npm_command !== undefined || process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const poll = setInterval(() => process.ppid !== parent && (clearInterval(poll), child.kill("SIGTERM")), 500);
    poll.unref();
  }
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
} else {
  await import(dist);
}
