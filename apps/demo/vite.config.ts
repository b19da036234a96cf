// Builds the demo page and its SharedWorker. `@tidemark/source` makes the workspace packages
// resolve to their TypeScript sources, so no package needs building first.
import { defaultClientConditions, defineConfig } from "vite";

const conditions = ["@tidemark/source", ...defaultClientConditions];
export default defineConfig({
  resolve: { conditions },
  worker: { format: "es" },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", reportCompressedSize: true },
});
