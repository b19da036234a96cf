/**
 * The calls a tab makes on the engine besides `attach`, named once. The SharedWorker's serving
 * code (engine/serve.ts) and the leader tab's channel (tab/leader.ts) forward each of them from
 * this list, so a method added to `EngineApi` is either listed here (and forwarded by both) or
 * fails the type check.
 */
import type { EngineApi } from "./types.js";

/** @internal An `EngineApi` method whose arguments are plain data (all but `attach`, which carries callbacks). */
export type EngineCall = Exclude<keyof EngineApi, "attach">;

/** A record, not an array: the type check names a missing or an extra method. */
const CALLS: Record<EngineCall, true> = {
  open: true,
  close: true,
  markRead: true,
  heartbeat: true,
  focus: true,
  network: true,
  visible: true,
  detach: true,
  stats: true,
};

/** @internal Every {@link EngineCall}. */
export const ENGINE_CALLS = Object.keys(CALLS) as readonly EngineCall[];

/** @internal The engine's methods but `attach`, each one handing its name and arguments to `call`. */
export function forwardCalls(call: (method: EngineCall, args: unknown[]) => Promise<unknown>): Pick<EngineApi, EngineCall> {
  return Object.fromEntries(ENGINE_CALLS.map((method) => [method, (...args: unknown[]) => call(method, args)])) as Pick<EngineApi, EngineCall>;
}

/** @internal Calls `engine`'s `method` with `args` (a call that arrived by name). */
export function callEngine(engine: EngineApi, method: EngineCall, args: unknown[]): Promise<unknown> {
  return (engine[method] as (...a: unknown[]) => Promise<unknown>)(...args);
}
