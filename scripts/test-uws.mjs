// `pnpm test:uws`: the bridge, hostile and conformance suites with the bridge served by
// uWebSockets.js (TIDEMARK_BRIDGE_RUNTIME=uws). The build the suites use,
// @trufflesuite/uws-js-unofficial, is native for Node 16–20 only; on a later Node there is nothing
// to run them on, which this says (the refusal of its JavaScript fallback is tested by
// test/edge/uws.test.ts and test/embedded/cli.test.ts on every Node).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const warn = console.warn;
console.warn = () => undefined; // the package announces its fallback on stderr
const uws = require("@trufflesuite/uws-js-unofficial");
console.warn = warn;
if (!/\[native code\]/.test(Function.prototype.toString.call(uws.App))) {
  console.log(`test:uws: no native uWebSockets.js build for Node ${process.versions.node} (ABI ${process.versions.modules}) in @trufflesuite/uws-js-unofficial; nothing run`);
  process.exit(0);
}
const suites = ["packages/server/test/bridge", "packages/server/test/hostile", "packages/server/test/conformance"];
const run = spawnSync("vitest", ["run", "--project", "integration", ...suites], {
  stdio: "inherit",
  shell: false,
  env: { ...process.env, TIDEMARK_BRIDGE_RUNTIME: "uws", PATH: `${process.cwd()}/node_modules/.bin:${process.env.PATH}` },
});
process.exit(run.status ?? 1);
