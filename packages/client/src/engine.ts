/**
 * The engine: the one place that holds the WebSocket, the feeds and their history for a whole
 * browser profile. It runs in the SharedWorker (or, without one, in the elected leader tab) and
 * serves every tab through {@link EngineApi}. Many tabs on one feed make one server subscription.
 */
import { ErrorCode, type ErrorPayload, type ServerFrame } from "@tidemark/shared";
import { Connection } from "./connection.js";
import { pickEffectTab } from "./effects.js";
import { FeedLog, feedKey, isSavedFeed } from "./feed-log.js";
import { tabStatus, type ConnState, type Status } from "./state.js";
import { Saver } from "./saver.js";
import { openStore, type FeedStore } from "./store.js";
import { TokenSource, type TokenProvider } from "./tokens.js";
import type { EngineApi, EngineConfig, EngineStats, FeedItem, OpenRequest, TabMessage } from "./types.js";

interface Tab {
  id: string;
  listener: (message: TabMessage) => void;
  getToken: TokenProvider | undefined;
  focused: boolean;
  focusedAt: number;
  order: number;
  lastSeen: number;
  subs: Map<string, Member>;
  lastStatus: string;
}

interface Member {
  tab: Tab;
  subId: string;
  effects: boolean;
  /** The snapshot was sent; later items go out as pushes. */
  ready: boolean;
  feed: Feed;
}

interface Feed {
  key: string;
  request: Pick<OpenRequest, "mode" | "topic" | "tenantId">;
  log: FeedLog | undefined;
  loaded: Promise<void>;
  members: Set<Member>;
  /** Id of the server subscription on the current socket. */
  wireId: string | undefined;
  caughtUp: boolean;
  /** A refusal that stands until a tab opens the feed again. */
  refused: ErrorPayload | undefined;
}

const SAVE_DELAY_MS = 100;

/** @internal */
export class Engine implements EngineApi {
  private config: EngineConfig | undefined;
  private store: FeedStore | undefined;
  private conn: Connection | undefined;
  private readonly tabs = new Map<string, Tab>();
  private readonly feeds = new Map<string, Feed>();
  private readonly wire = new Map<string, Feed>();
  private readonly hubs = new Map<string, Set<Feed>>();
  private wasLive = false;
  private nextWire = 0;
  private nextOrder = 0;
  private connectionId: string | undefined;
  private tokens: TokenSource | undefined;
  private saver: Saver | undefined;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;
  private readonly outbox = new Map<Feed, FeedItem[]>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;

  async attach(
    tab: { id: string; focused: boolean },
    config: EngineConfig,
    listener: (message: TabMessage) => void,
    getToken?: () => string | Promise<string>,
  ): Promise<void> {
    this.setup(config);
    const now = Date.now();
    const old = this.tabs.get(tab.id);
    if (old) {
      // The same tab again (it reconnected to the worker): keep its feeds and the socket; it
      // opens its feeds again and gets fresh snapshots.
      Object.assign(old, { listener, getToken, focused: tab.focused, lastSeen: now, lastStatus: "" });
      if (tab.focused) old.focusedAt = now;
      this.conn!.dispatch({ type: "start" });
      this.sendStatus(old);
      return;
    }
    this.tabs.set(tab.id, {
      id: tab.id,
      listener,
      getToken,
      focused: tab.focused,
      focusedAt: tab.focused ? now : 0,
      order: this.nextOrder++,
      lastSeen: now,
      subs: new Map(),
      lastStatus: "",
    });
    this.conn!.dispatch({ type: "start" });
    this.broadcastStatus();
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
      feed.refused = undefined;
      this.subscribe(feed);
    }
    const member: Member = { tab, subId: request.id, effects: request.effects, ready: false, feed };
    tab.subs.get(request.id)?.feed.members.delete(tab.subs.get(request.id)!);
    tab.subs.set(request.id, member);
    feed.members.add(member);
    await feed.loaded;
    if (!feed.members.has(member)) return;
    this.flushOutbox();
    member.ready = true;
    // A live feed has no history: a tab that joins it gets only what comes next.
    const items = feed.request.mode === "hub" ? feed.log!.items.slice() : [];
    this.send(tab, { type: "snapshot", sub: request.id, items, caughtUp: feed.caughtUp });
    if (feed.refused) this.send(tab, { type: "sub_error", sub: request.id, error: feed.refused });
    this.sendStatus(tab);
  }

  async close(tabId: string, subId: string): Promise<void> {
    const tab = this.tabs.get(tabId);
    const member = tab?.subs.get(subId);
    if (!tab || !member) return;
    tab.subs.delete(subId);
    this.leave(member);
    this.sendStatus(tab);
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
    this.broadcastStatus();
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
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    await this.flush();
  }

  /** Writes pending history now (the leader tab calls this on pagehide). */
  flush(): Promise<void> {
    return this.saver?.flush() ?? Promise.resolve();
  }

  // ---- setup and tabs ----

  private setup(config: EngineConfig): void {
    if (this.config) return;
    this.config = config;
    this.store = openStore(config.database);
    this.saver = new Saver(this.store, SAVE_DELAY_MS);
    // The focused tab first, then the longest-attached one.
    const providers = () =>
      [...this.tabs.values()]
        .sort((a, b) => Number(b.focused) - Number(a.focused) || a.order - b.order)
        .flatMap((t) => (t.getToken ? [t.getToken] : []));
    this.tokens = new TokenSource(providers, config.tokenRefreshMs, (token) => this.conn?.send({ type: "refresh", token }));
    this.conn = new Connection(config.url, config.backoff, {
      token: () => this.tokens!.get(),
      welcome: (frame) => {
        this.connectionId = frame.connectionId;
        this.tokens!.schedule(frame.expiresAt);
        for (const feed of this.feeds.values()) this.subscribe(feed);
        this.broadcastStatus();
      },
      frame: (frame) => this.receive(frame),
      state: (state) => this.stateChanged(state),
      closed: (code) => {
        // 4401: the token was refused or expired; the next connect asks a tab for a new one.
        if (code === 4401) this.tokens!.forget();
      },
    });
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
    if (changed) this.broadcastStatus();
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

  /** Nobody is left: forget the socket's subscriptions (saved history stays in the store). */
  private forgetWire(): void {
    this.wire.clear();
    this.hubs.clear();
    for (const feed of this.feeds.values()) feed.wireId = undefined;
  }

  // ---- feeds ----

  private createFeed(key: string, request: OpenRequest): Feed {
    const feed: Feed = {
      key,
      request: { mode: request.mode, topic: request.topic, tenantId: request.tenantId },
      log: undefined,
      loaded: Promise.resolve(),
      members: new Set(),
      wireId: undefined,
      caughtUp: false,
      refused: undefined,
    };
    // Registered before loading starts: the loader subscribes only a feed that is still the
    // registered one, and a live feed's loader finishes synchronously.
    this.feeds.set(key, feed);
    // Live feeds keep a few items only, for duplicate checks.
    const limit = request.mode === "hub" ? this.config!.historyLimit : 16;
    feed.loaded = (async () => {
      let saved;
      if (request.mode === "hub") {
        // A feed closed a moment ago may still have unwritten items: write them first.
        await this.saver!.flush();
        saved = await this.store!.load(key).catch(() => undefined);
      }
      // A record this version cannot read (older schema, corrupted) is ignored, not fatal.
      feed.log = new FeedLog(isSavedFeed(saved) ? saved : { key, lastN: 0, items: [] }, limit);
      if (this.feeds.get(key) === feed) this.subscribe(feed);
    })();
    return feed;
  }

  private leave(member: Member): void {
    const feed = member.feed;
    feed.members.delete(member);
    if (feed.members.size > 0) return;
    this.feeds.delete(feed.key);
    if (feed.wireId !== undefined) {
      this.conn?.send({ type: "unsubscribe", id: feed.wireId });
      this.wire.delete(feed.wireId);
    }
    for (const set of this.hubs.values()) set.delete(feed);
  }

  private subscribe(feed: Feed): void {
    if (!feed.log || feed.refused || this.conn?.state.kind !== "open") return;
    if (feed.wireId !== undefined && this.wire.get(feed.wireId) === feed) return;
    const id = `s${++this.nextWire}`;
    const { mode, topic, tenantId } = feed.request;
    const cursor = mode === "hub" ? feed.log.cursor : undefined;
    feed.wireId = id;
    feed.caughtUp = false;
    this.wire.set(id, feed);
    this.conn.send({
      type: "subscribe",
      id,
      topic,
      mode,
      ...(tenantId === undefined ? {} : { tenantId }),
      ...(cursor === undefined ? {} : { cursor }),
    });
  }

  private receive(frame: ServerFrame): void {
    switch (frame.type) {
      case "event": {
        const feeds = this.hubs.get(frame.hub);
        if (!feeds) return;
        for (const feed of feeds) {
          const item = feed.log?.addEvent(frame.event);
          if (item) this.deliver(feed, [item]);
        }
        return;
      }
      case "subscribed": {
        const feed = this.wire.get(frame.id);
        if (!feed) return;
        let set = this.hubs.get(frame.hub);
        if (!set) this.hubs.set(frame.hub, (set = new Set()));
        set.add(feed);
        // A live subscription has nothing to replay: it is at the live edge once it exists
        // (whether or not the server also sends `caught_up` for it).
        if (feed.request.mode === "live" && !feed.caughtUp) {
          feed.caughtUp = true;
          for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "caught_up", sub: m.subId });
          this.broadcastStatus();
        }
        return;
      }
      case "caught_up": {
        const feed = this.wire.get(frame.id);
        if (!feed) return;
        // Items before the status they lead to.
        this.flushOutbox();
        feed.caughtUp = true;
        if (feed.request.mode === "hub" && feed.log && frame.cursor) {
          // A watermark: keeps an idle tenant's cursor ahead of retention.
          feed.log.addWatermark(frame.cursor);
          this.saver!.mark(feed.log);
        }
        if (!this.wasLive && this.allCaughtUp()) this.wasLive = true;
        for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "caught_up", sub: m.subId });
        this.broadcastStatus();
        return;
      }
      case "reset": {
        const feed = this.wire.get(frame.id);
        if (!feed?.log) return;
        this.deliver(feed, [feed.log.addGap(frame.reason, frame.head, frame.message)]);
        return;
      }
      case "unsubscribed":
      case "error": {
        if (frame.id === undefined) {
          if (frame.code === ErrorCode.Unauthorized) this.tokens!.forget();
          return;
        }
        const feed = this.wire.get(frame.id);
        if (!feed || frame.code === undefined) return;
        this.wire.delete(frame.id);
        feed.wireId = undefined;
        feed.caughtUp = false;
        this.ended(feed, frame.code, frame.message ?? "", frame.type === "error" ? frame.retryAfterMs : undefined);
        return;
      }
      case "refreshed":
        this.tokens!.schedule(frame.expiresAt);
        return;
      default:
        return;
    }
  }

  /** The server ended or refused a subscription: retry what can be retried, report the rest. */
  private ended(feed: Feed, code: ErrorPayload["code"], message: string, retryAfterMs: number | undefined): void {
    const retry = (ms: number) =>
      setTimeout(() => {
        if (this.feeds.get(feed.key) === feed) this.subscribe(feed);
      }, ms);
    switch (code) {
      case ErrorCode.Unauthorized:
        // Once per profile: one refresh serves every feed and tab.
        void this.tokens!.refresh().then(() => this.subscribe(feed));
        return;
      case ErrorCode.BrokerUnavailable:
      case ErrorCode.Internal:
        retry(2_000 + Math.random() * 3_000);
        return;
      case ErrorCode.LimitExceeded:
        if (retryAfterMs !== undefined) {
          retry(retryAfterMs);
          return;
        }
        break;
    }
    feed.refused = { code, name: "TidemarkError", message };
    for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "sub_error", sub: m.subId, error: feed.refused });
    this.broadcastStatus();
  }

  // ---- delivery, effects, status ----

  /**
   * Queues items for the feed's tabs. Frames that arrive together (a replay, a burst) go out as
   * one message per tab: a postMessage per event per tab costs more than the event itself.
   */
  private deliver(feed: Feed, items: FeedItem[]): void {
    const queued = this.outbox.get(feed);
    if (queued) queued.push(...items);
    else this.outbox.set(feed, items.slice());
    if (feed.request.mode === "hub" && feed.log) this.saver!.mark(feed.log);
    this.flushTimer ??= setTimeout(() => this.flushOutbox(), 0);
  }

  private flushOutbox(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batches = [...this.outbox];
    this.outbox.clear();
    for (const [feed, items] of batches) {
      const effectTab = this.effectTab(feed);
      for (const m of feed.members) {
        if (!m.ready) continue;
        this.send(m.tab, { type: "items", sub: m.subId, items, effects: m.tab === effectTab && m.effects });
      }
    }
  }

  /** The tab that performs effects for this feed's new items (see effects.ts). */
  private effectTab(feed: Feed): Tab | undefined {
    return pickEffectTab([...feed.members].filter((m) => m.effects && m.ready).map((m) => m.tab));
  }

  private allCaughtUp(tab?: Tab): boolean {
    const feeds = tab ? [...tab.subs.values()].map((m) => m.feed) : [...this.feeds.values()];
    return feeds.every((f) => f.caughtUp || f.refused !== undefined);
  }

  private status(tab: Tab | undefined): Status {
    return tabStatus(this.conn?.state ?? { kind: "idle" }, this.wasLive, this.allCaughtUp(tab));
  }

  private stateChanged(state: ConnState): void {
    if (state.kind !== "open") {
      this.connectionId = undefined;
      this.forgetWire();
      for (const feed of this.feeds.values()) feed.caughtUp = false;
    }
    this.broadcastStatus();
  }

  private sendStatus(tab: Tab): void {
    const message: TabMessage = { type: "status", status: this.status(tab), tabs: this.tabs.size, connectionId: this.connectionId };
    const text = JSON.stringify(message);
    if (text === tab.lastStatus) return;
    tab.lastStatus = text;
    this.send(tab, message);
  }

  private broadcastStatus(): void {
    for (const tab of this.tabs.values()) this.sendStatus(tab);
  }

  private send(tab: Tab, message: TabMessage): void {
    try {
      // Over comlink this returns a promise that never settles for a dead tab: ignore it.
      const result = tab.listener(message) as unknown;
      if (result instanceof Promise) result.catch(() => undefined);
    } catch {
      // A tab that cannot be reached is dropped by the heartbeat sweep.
    }
  }
}
