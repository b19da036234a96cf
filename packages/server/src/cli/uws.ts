/**
 * `tidemark serve --uws MODULE`: loads the operator's uWebSockets.js build. Resolved from the
 * working directory (where the operator installed it) as well as from here, and refused with an
 * `InvalidArgumentError` unless it is native code for this Node.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { InvalidArgumentError } from "@tidemark/shared";
import { isNativeUws } from "../bridge/uws/serve.js";
import type { UwsModule } from "../bridge/uws/types.js";

export function loadUwsModule(spec: string, cwd: string = process.cwd()): UwsModule {
  let mod: unknown;
  try {
    const require = createRequire(join(cwd, "package.json"));
    mod = require(require.resolve(spec, { paths: [cwd, import.meta.dirname ?? cwd] }));
  } catch (cause) {
    throw new InvalidArgumentError(`--uws: cannot load "${spec}": ${(cause as Error).message.split("\n")[0]}`, { cause });
  }
  if (!isNativeUws(mod as UwsModule)) {
    throw new InvalidArgumentError(
      `--uws: "${spec}" is not a native uWebSockets.js build for Node ${process.versions.node} (ABI ${process.versions.modules}); install one for this Node, or leave --uws out to serve with ws`,
    );
  }
  return mod as UwsModule;
}
