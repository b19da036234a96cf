// The SharedWorker that owns the profile's one WebSocket. Vite bundles it because main.ts
// names it with `new SharedWorker(new URL("./tidemark.worker.ts", import.meta.url), ...)`.
import "@tidemark/client/worker";
