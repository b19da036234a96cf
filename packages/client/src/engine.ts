/**
 * The engine: the one place that holds the WebSocket, the feeds and their history for a whole
 * browser profile. It runs in the SharedWorker (or, without one, in the elected leader tab) and
 * serves every tab through {@link EngineApi}. Many tabs on one feed make one server subscription.
 * This file is the tab side; the socket, the feeds' subscriptions and history are in
 * engine-core.ts.
 */
import { EngineCore } from "./engine-core.js";
import type { Member, Tab } from "./engine-model.js";
import { feedKey } from "./feed-log.js";
import type { EngineApi, EngineConfig, EngineStats, OpenRequest, TabMessage } from "./types.js";

/** @internal */
export class Engine extends EngineCore implements EngineApi {
  private nextOrder = 0;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;

  async attach(
    tab: { id: string; focused: boolean },
    config: EngineConfig,
    listener: (message: TabMessage) => void,
    getToken?: () => string | Promise<string>,
  ): Promise<void> {
    this.setup(config);
    const hint = config.principal ?? null;
    // Another user signed in on this profile: drop the token, the socket and what is shown.
    if (hint !== this.history!.hint) this.switchUser(hint);
    const now = Date.now();
    const old = this.tabs.get(tab.id);
    if (old) {
      // The same tab again (it reconnected to the worker): keep its feeds and the socket; it
      // opens its feeds again and gets fresh snapshots.
      Object.assign(old, { listener, getToken, hint, focused: tab.focused, lastSeen: now, lastStatus: "" });
      if (tab.focused) old.focusedAt = now;
      this.conn!.dispatch({ type: "start" });
      this.delivery.sendStatus(old);
      return;
    }
    this.tabs.set(tab.id, {
      id: tab.id,
      listener,
      getToken,
      hint,
      focused: tab.focused,
      focusedAt: tab.focused ? now : 0,
      order: this.nextOrder++,
      lastSeen: now,
      subs: new Map(),
      lastStatus: "",
    });
    this.conn!.dispatch({ type: "start" });
    this.delivery.broadcastStatus();
  }

  async open(tabId: string, request: OpenRequest): Promise<void> {
    const tab = this.tabs.get(tabId);
    if (!tab) throw new Error(`unknown tab ${tabId}: attach first`);
    tab.lastSeen = Date.now();
    const key = feedKey(request.mode, request.topic, request.tenantId);
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = this.createFeed(key, request);
    } else if (feed.refused && feed.wireId === undefined) {
      // Opened again: ask the server again (and show nothing saved until it answers).
      feed.refused = undefined;
      this.subscribe(feed);
    }
    const member: Member = { tab, subId: request.id, effects: request.effects, ready: false, snapshots: 0, feed };
    tab.subs.get(request.id)?.feed.members.delete(tab.subs.get(request.id)!);
    tab.subs.set(request.id, member);
    feed.members.add(member);
    await feed.loaded;
    if (!feed.members.has(member)) return;
    this.delivery.release(feed);
    this.delivery.sendStatus(tab);
  }

  async close(tabId: string, subId: string): Promise<void> {
    const tab = this.tabs.get(tabId);
    const member = tab?.subs.get(subId);
    if (!tab || !member) return;
    tab.subs.delete(subId);
    this.leave(member);
    this.delivery.sendStatus(tab);
  }

  async heartbeat(tabId: string): Promise<boolean> {
    const tab = this.tabs.get(tabId);
    if (tab) tab.lastSeen = Date.now();
    return tab !== undefined;
  }

  async focus(tabId: string, focused: boolean): Promise<void> {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    tab.focused = focused;
    if (focused) tab.focusedAt = Date.now();
  }

  async network(_tabId: string, online: boolean): Promise<void> {
    this.conn?.dispatch({ type: online ? "online" : "offline" });
  }

  async visible(_tabId: string): Promise<void> {
    this.conn?.dispatch({ type: "visible" });
  }

  async detach(tabId: string): Promise<void> {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    this.dropTab(tab);
    this.delivery.broadcastStatus();
  }

  async stats(): Promise<EngineStats> {
    let items = 0;
    for (const feed of this.feeds.values()) items += feed.log?.items.length ?? 0;
    return {
      tabs: this.tabs.size,
      feeds: this.feeds.size,
      status: this.status(undefined),
      connectionId: this.connectionId,
      socketsOpened: this.conn?.opened ?? 0,
      items,
    };
  }

  /** Stops everything: socket, timers; pending history is written. The engine is not reused. */
  async shutdown(): Promise<void> {
    for (const tab of [...this.tabs.values()]) this.dropTab(tab);
    this.conn?.dispatch({ type: "stop" });
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.tokens?.stop();
    this.delivery.stop();
    await this.flush();
  }

  /** Writes pending history now (the leader tab calls this on pagehide). */
  flush(): Promise<void> {
    return this.history?.flush() ?? Promise.resolve();
  }

  // ---- tabs ----

  private setup(config: EngineConfig): void {
    if (this.config) return;
    this.start(config);
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1_000, config.tabTimeoutMs / 3));
  }

  private sweep(): void {
    const deadline = Date.now() - this.config!.tabTimeoutMs;
    let changed = false;
    for (const tab of [...this.tabs.values()]) {
      if (tab.lastSeen < deadline) {
        this.dropTab(tab);
        changed = true;
      }
    }
    if (changed) this.delivery.broadcastStatus();
  }

  private dropTab(tab: Tab): void {
    this.tabs.delete(tab.id);
    for (const member of tab.subs.values()) this.leave(member);
    tab.subs.clear();
    if (this.tabs.size === 0) {
      this.conn?.dispatch({ type: "stop" });
      this.forgetWire();
    }
  }
}
