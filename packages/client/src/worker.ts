/**
 * The SharedWorker entry: one engine for every tab of the profile, each tab on its own port.
 *
 * Bundle it with the page, e.g. with Vite:
 * `new SharedWorker(new URL("./tidemark.worker.ts", import.meta.url), { type: "module" })`
 * where `tidemark.worker.ts` holds `import "@tidemark/client/worker";`.
 */
import { keepErrorCodes } from "./comlink-errors.js";
import { Engine } from "./engine.js";
import { serve } from "./engine/serve.js";
import { holdLifeline } from "./lifeline.js";

keepErrorCodes();

const engine = new Engine();
// Held until the worker ends: a tab waiting for it learns at once that the worker is gone.
const lifeline = holdLifeline();

interface SharedWorkerScope {
  onconnect: ((event: MessageEvent) => void) | null;
  addEventListener(type: "online" | "offline", listener: () => void): void;
}
const scope = globalThis as unknown as SharedWorkerScope;
scope.onconnect = (event) => {
  const port = event.ports[0];
  if (port) serve(engine, port, lifeline);
};
// Workers get their own online/offline events; tabs report theirs too.
scope.addEventListener("online", () => void engine.network("worker", true));
scope.addEventListener("offline", () => void engine.network("worker", false));
