/**
 * `pnpm dev`: the page on Vite's dev server (http://localhost:5173), the API and the socket
 * proxied to the server on :3000. The proxied socket keeps the page's Origin, so the server
 * lists http://localhost:5173 in `origins`.
 */
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  // Only inside the Tidemark repository: use the packages' sources. Drop it in your own app.
  resolve: { conditions: ["@tidemark/source", ...defaultClientConditions] },
  // An installed @tidemark/client must not be pre-bundled: its SharedWorker URL must stay its own.
  optimizeDeps: { exclude: ["@tidemark/client"] },
  worker: { format: "es" },
  server: {
    proxy: {
      "/api": "http://localhost:3000",
      "/ws": { target: "ws://localhost:3000", ws: true },
    },
  },
});
