/**
 * The SharedWorker entry: one engine for every tab of the profile, each tab on its own port.
 *
 * Bundle it with the page, e.g. with Vite:
 * `new SharedWorker(new URL("./tidemark.worker.ts", import.meta.url), { type: "module" })`
 * where `tidemark.worker.ts` holds `import "@tidemark/client/worker";`.
 */
import { expose } from "comlink";
import { keepErrorCodes } from "./comlink-errors.js";
import { Engine } from "./engine.js";
import { packer, type Packet } from "./tab-wire.js";
import type { EngineApi } from "./types.js";

keepErrorCodes();

const engine = new Engine();
/** Only the API methods are reachable from tabs. */
const api: EngineApi = {
  // The tab's listener takes packets (tab-wire.ts): its proxy is typed as EngineApi's listener.
  attach: (tab, config, listener, getToken) => engine.attach(tab, config, packer(listener as unknown as (packet: Packet) => unknown), getToken),
  open: (tabId, request) => engine.open(tabId, request),
  close: (tabId, subId) => engine.close(tabId, subId),
  heartbeat: (tabId) => engine.heartbeat(tabId),
  focus: (tabId, focused) => engine.focus(tabId, focused),
  network: (tabId, online) => engine.network(tabId, online),
  visible: (tabId) => engine.visible(tabId),
  detach: (tabId) => engine.detach(tabId),
  stats: () => engine.stats(),
};

interface SharedWorkerScope {
  onconnect: ((event: MessageEvent) => void) | null;
  addEventListener(type: "online" | "offline", listener: () => void): void;
}
const scope = globalThis as unknown as SharedWorkerScope;
scope.onconnect = (event) => {
  const port = event.ports[0];
  if (port) expose(api, port);
};
// Workers get their own online/offline events; tabs report theirs too.
scope.addEventListener("online", () => void engine.network("worker", true));
scope.addEventListener("offline", () => void engine.network("worker", false));
