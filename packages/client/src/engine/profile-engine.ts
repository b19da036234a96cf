/**
 * The engine of one browser profile: the one place that holds the WebSocket, the feeds and
 * their history, serving every tab of the profile. Built ready from the first tab's settings
 * (see engine.ts). This file keeps the tabs; the feeds are in feeds.ts, the socket in
 * socket.ts, what reaches the tabs in delivery.ts.
 */
import { CloseCode } from "@tidemark/shared";
import type { EngineConfig, EngineStats, OpenRequest, ReadMark, TabMessage } from "../types.js";
import { Delivery } from "./delivery.js";
import { Feeds } from "./feeds.js";
import { handleFrame } from "./frames.js";
import { History } from "./history.js";
import type { FeedStateChange, Member, Tab } from "./model.js";
import { Socket } from "./socket.js";
import { TokenSource } from "./tokens.js";

/** @internal A tab as it attaches. */
export interface TabInfo {
  id: string;
  focused: boolean;
  listener: (message: TabMessage) => void;
  getToken: (() => string | Promise<string>) | undefined;
  /** The user the tab's app says is signed in. */
  hint: string | null;
}

/** @internal What a profile engine tells its owner besides the tabs (tests watch feeds with it). */
export interface ProfileEngineHooks {
  /** Each change of a feed's state, as `{ oldState, newState }`. None by default. */
  feedState?: (change: FeedStateChange) => void;
}

/** @internal */
export class ProfileEngine {
  private readonly tabs = new Map<string, Tab>();
  private nextOrder = 0;
  private readonly history: History;
  private readonly tokens: TokenSource;
  private readonly socket: Socket;
  private readonly delivery: Delivery;
  private readonly feeds: Feeds;
  private readonly sweepTimer: ReturnType<typeof setInterval>;

  constructor(
    private readonly config: EngineConfig,
    hooks: ProfileEngineHooks = {},
  ) {
    this.history = new History(config.database, config.principal);
    this.tokens = new TokenSource(() => this.tokenProviders(), config.tokenRefreshMs, (token) => this.socket.send({ type: "refresh", token }));
    this.socket = new Socket(config.url, config.backoff, config.connectTimeoutMs, {
      token: () => this.tokens.get(),
      welcome: (frame) => {
        this.tokens.schedule(frame.expiresAt);
        this.feeds.welcomed(frame);
      },
      frame: (frame) => handleFrame(this.feeds, frame),
      state: ({ newState }) => this.feeds.socketChanged(newState.kind === "open"),
      closed: (code) => {
        // The token was refused or expired; the next connect asks a tab for a new one.
        if (code === CloseCode.Unauthorized) this.tokens.forget();
      },
    });
    this.delivery = new Delivery({
      tabs: () => this.tabs.values(),
      tabCount: () => this.tabs.size,
      status: (tab) => this.feeds.status(tab),
      connectionId: () => this.connectionId,
      error: () => (this.socket.state.kind === "failed" ? this.socket.state.error : undefined),
      mayShow: (feed) => this.feeds.mayShow(feed),
    });
    this.feeds = new Feeds({ config, socket: this.socket, history: this.history, tokens: this.tokens, delivery: this.delivery, feedState: hooks.feedState });
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1_000, config.tabTimeoutMs / 3));
  }

  private get connectionId(): string | undefined {
    const state = this.socket.state;
    return state.kind === "open" ? state.connectionId : undefined;
  }

  /** Token providers of the signed-in user's tabs: the focused tab first, then the longest-attached one. */
  private tokenProviders() {
    return [...this.tabs.values()]
      .filter((t) => t.hint === this.history.hint)
      .sort((a, b) => Number(b.focused) - Number(a.focused) || a.order - b.order)
      .flatMap((t) => (t.getToken ? [t.getToken] : []));
  }

  attach({ id, focused, listener, getToken, hint }: TabInfo): void {
    // Another user signed in on this profile: drop the token, the socket and what is shown.
    if (hint !== this.history.hint) this.switchUser(hint);
    const now = Date.now();
    const old = this.tabs.get(id);
    if (old) {
      // The same tab again (it reconnected to the worker): keep its feeds and the socket; it
      // opens its feeds again and gets fresh snapshots.
      Object.assign(old, { listener, getToken, hint, focused, lastSeen: now, lastStatus: "" });
      if (focused) old.focusedAt = now;
      this.socket.dispatch({ type: "start" });
      this.delivery.sendStatus(old);
      return;
    }
    const tab: Tab = { id, listener, getToken, hint, focused, focusedAt: focused ? now : 0, order: this.nextOrder++, lastSeen: now, subs: new Map(), lastStatus: "" };
    this.tabs.set(id, tab);
    this.socket.dispatch({ type: "start" });
    this.delivery.broadcastStatus();
  }

  /** The app signed in another user: nothing of the previous one is shown or sent again. */
  private switchUser(hint: string | null): void {
    this.history.hint = hint;
    this.tokens.forget();
    this.feeds.adopt(undefined);
    if (this.socket.state.kind !== "idle") this.socket.dispatch({ type: "stop" });
  }

  async open(tabId: string, request: OpenRequest): Promise<void> {
    const tab = this.tabs.get(tabId);
    if (!tab) throw new Error(`unknown tab ${tabId}: attach first`);
    tab.lastSeen = Date.now();
    const feed = this.feeds.open(request, tab.subs.get(request.id)?.feed);
    const member: Member = { tab, subId: request.id, effects: request.effects, ready: false, snapshots: 0, feed };
    const replaced = tab.subs.get(request.id);
    if (replaced) replaced.feed.members.delete(replaced);
    tab.subs.set(request.id, member);
    feed.members.add(member);
    await feed.loaded;
    if (!feed.members.has(member)) return;
    this.delivery.release(feed);
    this.delivery.sendStatus(tab);
  }

  close(tabId: string, subId: string): void {
    const tab = this.tabs.get(tabId);
    const member = tab?.subs.get(subId);
    if (!tab || !member) return;
    tab.subs.delete(subId);
    this.feeds.leave(member);
    this.delivery.sendStatus(tab);
  }

  async markRead(tabId: string, subId: string, mark: ReadMark): Promise<void> {
    const member = this.tabs.get(tabId)?.subs.get(subId);
    if (member) await this.feeds.markRead(member.feed, mark);
  }

  heartbeat(tabId: string): boolean {
    const tab = this.tabs.get(tabId);
    if (tab) tab.lastSeen = Date.now();
    return tab !== undefined;
  }

  focus(tabId: string, focused: boolean): void {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    tab.focused = focused;
    if (focused) tab.focusedAt = Date.now();
  }

  network(online: boolean): void {
    this.socket.dispatch({ type: online ? "online" : "offline" });
  }

  visible(): void {
    this.socket.dispatch({ type: "visible" });
  }

  detach(tabId: string): void {
    const tab = this.tabs.get(tabId);
    if (!tab) return;
    this.dropTab(tab);
    this.delivery.broadcastStatus();
  }

  stats(): EngineStats {
    let items = 0;
    for (const feed of this.feeds.all()) items += feed.log?.items.length ?? 0;
    return {
      tabs: this.tabs.size,
      feeds: this.feeds.size,
      status: this.feeds.status(undefined),
      connectionId: this.connectionId,
      socketsOpened: this.socket.opened,
      items,
    };
  }

  /** Stops the socket and every timer; pending history is written. The engine is not reused. */
  async shutdown(): Promise<void> {
    for (const tab of [...this.tabs.values()]) this.dropTab(tab);
    this.socket.dispatch({ type: "stop" });
    clearInterval(this.sweepTimer);
    this.tokens.stop();
    this.feeds.stop();
    this.delivery.stop();
    await this.flush();
  }

  /** Writes pending history now (the leader tab calls this on pagehide). */
  flush(): Promise<void> {
    return this.history.flush();
  }

  private sweep(): void {
    const deadline = Date.now() - this.config.tabTimeoutMs;
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
    for (const member of tab.subs.values()) this.feeds.leave(member);
    tab.subs.clear();
    if (this.tabs.size === 0) {
      this.socket.dispatch({ type: "stop" });
      this.feeds.forgetWire();
    }
  }
}
