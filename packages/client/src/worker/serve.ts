/**
 * What the SharedWorker exposes on each tab's port (comlink): the engine's API. Only the API
 * methods are reachable from tabs.
 */
import { expose } from "comlink";
import { portSender } from "../tab-wire.js";
import type { EngineApi } from "../types.js";

/** @internal Serves `engine` to the tab on `port`. */
export function serve(engine: EngineApi, port: MessagePort): void {
  const api: EngineApi = {
    // A tab sends its own port for the engine's packets (tab-wire.ts), typed as EngineApi's listener.
    attach: (tab, config, port, getToken) => engine.attach(tab, config, portSender(port as unknown as MessagePort), getToken),
    open: (tabId, request) => engine.open(tabId, request),
    close: (tabId, subId) => engine.close(tabId, subId),
    heartbeat: (tabId) => engine.heartbeat(tabId),
    focus: (tabId, focused) => engine.focus(tabId, focused),
    network: (tabId, online) => engine.network(tabId, online),
    visible: (tabId) => engine.visible(tabId),
    detach: (tabId) => engine.detach(tabId),
    stats: () => engine.stats(),
  };
  expose(api, port);
}
