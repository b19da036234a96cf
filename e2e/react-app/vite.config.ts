// The React hooks' e2e page: built into the demo's dist under /react/, so the demo server
// serves it on the same origin as its bridge, token and publish routes.
import { fileURLToPath } from "node:url";
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/react/",
  resolve: { conditions: ["@tidemark/source", ...defaultClientConditions] },
  worker: { format: "es" },
  build: { outDir: fileURLToPath(new URL("../../apps/demo/dist/react", import.meta.url)), emptyOutDir: true, target: "es2022" },
});
