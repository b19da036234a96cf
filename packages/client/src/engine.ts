/**
 * The engine as tabs reach it ({@link EngineApi}), in the SharedWorker (worker.ts), in the
 * elected leader tab (tab/leader.ts) or in a tab of its own. Its settings come with the first
 * tab that attaches, so the profile's engine (engine/profile-engine.ts) is built then, ready,
 * and serves every tab after. Many tabs on one feed make one server subscription.
 */
import type { EngineApi, EngineConfig, EngineStats, OpenRequest, ReadMark, TabMessage } from "./types.js";
import { ProfileEngine } from "./engine/profile-engine.js";

/** @internal */
export class Engine implements EngineApi {
  /** Built by the first `attach`: the first tab decides the settings. */
  #engine: ProfileEngine | undefined;

  async attach(
    tab: { id: string; focused: boolean },
    config: EngineConfig,
    listener: (message: TabMessage) => void,
    getToken?: () => string | Promise<string>,
  ): Promise<void> {
    this.#engine ??= new ProfileEngine(config);
    this.#engine.attach({ id: tab.id, focused: tab.focused, listener, getToken, hint: config.principal ?? null });
  }

  async open(tabId: string, request: OpenRequest): Promise<void> {
    if (!this.#engine) throw new Error(`unknown tab ${tabId}: attach first`);
    await this.#engine.open(tabId, request);
  }

  async markRead(tabId: string, subId: string, mark: ReadMark): Promise<void> {
    await this.#engine?.markRead(tabId, subId, mark);
  }

  async close(tabId: string, subId: string): Promise<void> {
    this.#engine?.close(tabId, subId);
  }

  /** False when the engine does not know the tab (it must attach again). */
  async heartbeat(tabId: string): Promise<boolean> {
    return this.#engine?.heartbeat(tabId) ?? false;
  }

  async focus(tabId: string, focused: boolean): Promise<void> {
    this.#engine?.focus(tabId, focused);
  }

  async network(_tabId: string, online: boolean): Promise<void> {
    this.#engine?.network(online);
  }

  async visible(_tabId: string): Promise<void> {
    this.#engine?.visible();
  }

  async detach(tabId: string): Promise<void> {
    this.#engine?.detach(tabId);
  }

  async stats(): Promise<EngineStats> {
    return this.#engine?.stats() ?? { tabs: 0, feeds: 0, status: "connecting", socketsOpened: 0, items: 0 };
  }

  /** Stops the socket and every timer; pending history is written. The engine is not reused. */
  async shutdown(): Promise<void> {
    await this.#engine?.shutdown();
  }

  /** Writes pending history now (the leader tab calls this on pagehide). */
  flush(): Promise<void> {
    return this.#engine?.flush() ?? Promise.resolve();
  }
}
