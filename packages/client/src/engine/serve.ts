/**
 * What the SharedWorker exposes on each tab's port (comlink): the engine's API. Only the API
 * methods are reachable from tabs.
 */
import { expose } from "comlink";
import { callEngine, forwardCalls } from "../engine-calls.js";
import { portSender } from "../tab-wire.js";
import type { EngineApi } from "../types.js";

/**
 * @internal Serves `engine` to the tab on `port`. `lifeline`: the name of the Web Lock the worker
 * holds (lifeline.ts), told to each tab as it attaches; undefined without Web Locks.
 */
export function serve(engine: EngineApi, port: MessagePort, lifeline: Promise<string | undefined> = Promise.resolve(undefined)): void {
  const api: EngineApi = {
    ...forwardCalls((method, args) => callEngine(engine, method, args)),
    // A tab sends its own port for the engine's packets (tab-wire.ts), typed as EngineApi's listener.
    attach: async (tab, config, port, getToken) => {
      await engine.attach(tab, config, portSender(port as unknown as MessagePort), getToken);
      const name = await lifeline;
      return name === undefined ? undefined : { lifeline: name };
    },
  };
  expose(api, port);
}
