// `pnpm typecheck`: every package against its own runtime (packages/*/tsconfig.json: shared has
// neither DOM nor Node types, client and react have DOM but no Node, server has Node but no DOM),
// their tests (tsconfig.test.json, which add Node), then the apps, e2e and bench (tsconfig.json).
// Two at a time: the machines that run this have two cores.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const projects = [
  ...["shared", "client", "react", "server"].flatMap((p) => [`packages/${p}/tsconfig.json`, `packages/${p}/tsconfig.test.json`]),
  "packages/testing/tsconfig.json",
  "tsconfig.json",
];

function check(project) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, "-p", project, "--noEmit"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ project, code, out }));
  });
}

const queue = [...projects];
const failed = [];
await Promise.all(
  [0, 1].map(async () => {
    for (let project = queue.shift(); project; project = queue.shift()) {
      const result = await check(project);
      if (result.code !== 0) failed.push(result);
      console.log(`${result.code === 0 ? "ok  " : "FAIL"} ${project}`);
    }
  }),
);
for (const { project, out } of failed) console.error(`\n${project}:\n${out}`);
process.exitCode = failed.length > 0 ? 1 : 0;
