/**
 * What the SharedWorker exposes on each tab's port (comlink): the engine's API. Only the API
 * methods are reachable from tabs.
 */
import { expose } from "comlink";
import { callEngine, forwardCalls } from "../engine-calls.js";
import { portSender } from "../tab-wire.js";
import type { EngineApi } from "../types.js";

/** @internal Serves `engine` to the tab on `port`. */
export function serve(engine: EngineApi, port: MessagePort): void {
  const api: EngineApi = {
    ...forwardCalls((method, args) => callEngine(engine, method, args)),
    // A tab sends its own port for the engine's packets (tab-wire.ts), typed as EngineApi's listener.
    attach: (tab, config, port, getToken) => engine.attach(tab, config, portSender(port as unknown as MessagePort), getToken),
  };
  expose(api, port);
}
