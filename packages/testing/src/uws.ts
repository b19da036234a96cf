/**
 * The uWebSockets.js build the suites serve bridges with (`serveBridgeUws`, `tidemark serve
 * --uws`): @trufflesuite/uws-js-unofficial 20.30, a root dev dependency, native for Node 16–20
 * only. On a later Node the package loads a JavaScript fallback, which both refuse.
 */
import { createRequire } from "node:module";
import type { UwsModule } from "@tidemark/server";

/** The module name, as `tidemark serve --uws` takes it. */
export const TEST_UWS_BUILD = "@trufflesuite/uws-js-unofficial";

const require = createRequire(import.meta.url);

/** Loads the build; its note on stderr that it fell back to JavaScript is kept quiet. */
export function loadTestUws(): UwsModule {
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    return require(TEST_UWS_BUILD) as UwsModule;
  } finally {
    console.warn = warn;
  }
}

/** True when {@link loadTestUws} gives native code on this Node, not the package's fallback. */
export function testUwsIsNative(): boolean {
  return /\[native code\]/.test(Function.prototype.toString.call(loadTestUws().App));
}
