/** The version of the installed `@tidemark/server`, for `tidemark --version`. */
import { readFileSync } from "node:fs";

/** Reads the package's own package.json: two levels above both src/cli and dist/cli. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}
