/**
 * The engine's socket side: the connection, one server subscription per feed, the frames that
 * come back, and whose history the feeds show (see history.ts). `Engine` (engine.ts) adds the
 * tabs on top.
 *
 * A hub feed's saved history is shown once the server accepted (or refused) the subscription
 * on the current socket, or at once while the server cannot be reached (offline first): a
 * feed the server refuses never shows what was saved of it, and a user who signs in on a shared
 * profile never sees the previous user's history while the server is asked who they are.
 */
import { ErrorCode, type ErrorPayload, type ServerFrame, type WelcomeFrame } from "@tidemark/shared";
import { Connection } from "./connection.js";
import { Delivery } from "./delivery.js";
import type { Feed, Member, Tab } from "./engine-model.js";
import { FeedLog } from "./feed-log.js";
import { History } from "./history.js";
import { tabStatus, type ConnState, type Status } from "./state.js";
import { TokenSource } from "./tokens.js";
import type { EngineConfig, OpenRequest } from "./types.js";

/** Live feeds keep a few items only, for duplicate checks. */
const LIVE_LIMIT = 16;

/** @internal */
export abstract class EngineCore {
  protected config: EngineConfig | undefined;
  protected conn: Connection | undefined;
  protected tokens: TokenSource | undefined;
  protected history: History | undefined;
  protected readonly tabs = new Map<string, Tab>();
  protected readonly feeds = new Map<string, Feed>();
  protected connectionId: string | undefined;
  private readonly wire = new Map<string, Feed>();
  private readonly hubs = new Map<string, Set<Feed>>();
  private wasLive = false;
  private nextWire = 0;
  /** The server named the principal on the current socket: subscriptions may go out. */
  private confirmed = false;
  protected readonly delivery = new Delivery({
    tabs: () => this.tabs.values(),
    tabCount: () => this.tabs.size,
    status: (tab) => this.status(tab),
    connectionId: () => this.connectionId,
    mayShow: (feed) => this.mayShow(feed),
  });

  protected start(config: EngineConfig): void {
    this.config = config;
    this.history = new History(config.database, config.principal ?? null);
    // Tabs of the signed-in user only; the focused tab first, then the longest-attached one.
    const providers = () =>
      [...this.tabs.values()]
        .filter((t) => t.hint === this.history!.hint)
        .sort((a, b) => Number(b.focused) - Number(a.focused) || a.order - b.order)
        .flatMap((t) => (t.getToken ? [t.getToken] : []));
    this.tokens = new TokenSource(providers, config.tokenRefreshMs, (token) => this.conn?.send({ type: "refresh", token }));
    this.conn = new Connection(config.url, config.backoff, {
      token: () => this.tokens!.get(),
      welcome: (frame) => this.welcomed(frame),
      frame: (frame) => this.receive(frame),
      state: (state) => this.stateChanged(state),
      closed: (code) => {
        // 4401: the token was refused or expired; the next connect asks a tab for a new one.
        if (code === 4401) this.tokens!.forget();
      },
    });
  }

  private welcomed(frame: WelcomeFrame): void {
    this.connectionId = frame.connectionId;
    this.tokens!.schedule(frame.expiresAt);
    void this.history!.ready.then(() => {
      if (this.connectionId !== frame.connectionId || this.conn?.state.kind !== "open") return;
      // An older server names no principal: one history for the profile, as before.
      this.adopt(frame.principal ?? "");
      this.confirmed = true;
      for (const feed of this.feeds.values()) this.subscribe(feed);
      this.delivery.broadcastStatus();
    });
  }

  /** The app signed in another user: nothing of the previous one is shown or sent again. */
  protected switchUser(hint: string | null): void {
    this.history!.hint = hint;
    this.tokens!.forget();
    this.adopt(undefined);
    if (this.conn!.state.kind !== "idle") this.conn!.dispatch({ type: "stop" });
  }

  /** The principal is now `principal`: every feed leaves the socket and loads that one's history. */
  private adopt(principal: string | undefined): void {
    if (!this.history!.adopt(principal)) return;
    for (const feed of this.feeds.values()) {
      this.unwire(feed);
      feed.refused = undefined;
      feed.accepted = false;
      feed.caughtUp = false;
      this.delivery.clear(feed);
      this.load(feed);
    }
    this.delivery.broadcastStatus();
  }

  /** The socket is gone: forget its subscriptions (saved history stays in the store). */
  protected forgetWire(): void {
    this.wire.clear();
    this.hubs.clear();
    for (const feed of this.feeds.values()) {
      feed.wireId = undefined;
      feed.accepted = false;
    }
  }

  // ---- feeds ----

  protected createFeed(key: string, request: OpenRequest): Feed {
    const feed: Feed = {
      key,
      request: { mode: request.mode, topic: request.topic, tenantId: request.tenantId },
      log: undefined,
      loaded: Promise.resolve(),
      members: new Set(),
      wireId: undefined,
      caughtUp: false,
      accepted: false,
      refused: undefined,
    };
    // Registered before loading starts: the loader only completes a feed that is still the
    // registered one (a live feed's loader used to run to its end before registration).
    this.feeds.set(key, feed);
    this.load(feed);
    return feed;
  }

  private limit(feed: Feed): number {
    return feed.request.mode === "hub" ? this.config!.historyLimit : LIVE_LIMIT;
  }

  /** Reads the feed's saved history for the current principal, then shows and subscribes it. */
  private load(feed: Feed): void {
    feed.log = undefined;
    feed.loaded = this.history!.read(feed, this.limit(feed)).then((log) => {
      if (!log || this.feeds.get(feed.key) !== feed) return;
      feed.log = log;
      this.delivery.release(feed);
      this.subscribe(feed);
    });
  }

  private mayShow(feed: Feed): boolean {
    if (feed.request.mode === "live" || feed.accepted || feed.refused) return true;
    const kind = this.conn?.state.kind;
    return kind !== "connecting" && kind !== "open";
  }

  protected leave(member: Member): void {
    const feed = member.feed;
    feed.members.delete(member);
    if (feed.members.size > 0) return;
    this.feeds.delete(feed.key);
    this.unwire(feed);
  }

  /** Ends the feed's subscription on the socket, if it has one. */
  private unwire(feed: Feed): void {
    if (feed.wireId !== undefined) {
      this.conn?.send({ type: "unsubscribe", id: feed.wireId });
      this.wire.delete(feed.wireId);
      feed.wireId = undefined;
    }
    for (const set of this.hubs.values()) set.delete(feed);
  }

  protected subscribe(feed: Feed): void {
    if (!feed.log || feed.refused || !this.confirmed || this.conn?.state.kind !== "open") return;
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
        for (const feed of this.hubs.get(frame.hub) ?? []) {
          const item = feed.log?.addEvent(frame.event);
          if (!item) continue;
          this.delivery.deliver(feed, [item]);
          this.history!.mark(feed.log!);
        }
        return;
      }
      case "subscribed": {
        const feed = this.wire.get(frame.id);
        if (!feed) return;
        let set = this.hubs.get(frame.hub);
        if (!set) this.hubs.set(frame.hub, (set = new Set()));
        set.add(feed);
        feed.accepted = true;
        this.delivery.release(feed);
        // A live subscription has nothing to replay: it is at the live edge once it exists
        // (whether or not the server also sends `caught_up` for it).
        if (feed.request.mode === "live" && !feed.caughtUp) this.reachedEdge(feed);
        return;
      }
      case "caught_up": {
        const feed = this.wire.get(frame.id);
        if (!feed) return;
        // Items before the status they lead to.
        this.delivery.flush();
        if (feed.request.mode === "hub" && feed.log && frame.cursor) {
          // A watermark: keeps an idle tenant's cursor ahead of retention.
          feed.log.addWatermark(frame.cursor);
          this.history!.mark(feed.log);
        }
        this.reachedEdge(feed);
        return;
      }
      case "reset": {
        const feed = this.wire.get(frame.id);
        if (!feed?.log) return;
        // The cursor sent is dropped for `head`: a reconnect never sends it again.
        this.delivery.deliver(feed, [feed.log.addGap(frame.reason, frame.head, frame.message)]);
        this.history!.mark(feed.log);
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
        // The new token may be another user's: that one's history, subscribed again.
        if (frame.principal !== undefined) this.adopt(frame.principal);
        return;
      default:
        return;
    }
  }

  private reachedEdge(feed: Feed): void {
    feed.caughtUp = true;
    if (!this.wasLive && this.allCaughtUp()) this.wasLive = true;
    this.delivery.caughtUp(feed);
    this.delivery.broadcastStatus();
  }

  /** The server ended or refused a subscription: retry what can be retried, report the rest. */
  private ended(feed: Feed, code: ErrorPayload["code"], message: string, retryAfterMs: number | undefined): void {
    const retry = (ms: number) => {
      // Not a refusal of access: what is saved may be shown meanwhile.
      feed.accepted = true;
      this.delivery.release(feed);
      setTimeout(() => {
        if (this.feeds.get(feed.key) === feed) this.subscribe(feed);
      }, ms);
    };
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
    if (code === ErrorCode.Forbidden && feed.log) {
      // No access: what was saved of the feed is not shown, and not kept.
      feed.log = new FeedLog({ key: feed.log.key, lastN: feed.log.lastN, items: [] }, this.limit(feed));
      this.history!.mark(feed.log);
      this.delivery.clear(feed);
    }
    feed.refused = { code, name: "TidemarkError", message };
    this.delivery.refused(feed);
    this.delivery.release(feed);
    this.delivery.broadcastStatus();
  }

  // ---- status ----

  private allCaughtUp(tab?: Tab): boolean {
    const feeds = tab ? [...tab.subs.values()].map((m) => m.feed) : [...this.feeds.values()];
    return feeds.every((f) => f.caughtUp || f.refused !== undefined);
  }

  protected status(tab: Tab | undefined): Status {
    return tabStatus(this.conn?.state ?? { kind: "idle" }, this.wasLive, this.allCaughtUp(tab));
  }

  private stateChanged(state: ConnState): void {
    if (state.kind !== "open") {
      this.connectionId = undefined;
      this.confirmed = false;
      this.forgetWire();
      for (const feed of this.feeds.values()) feed.caughtUp = false;
    }
    // The server cannot be asked now: held snapshots of saved history are shown.
    for (const feed of this.feeds.values()) this.delivery.release(feed);
    this.delivery.broadcastStatus();
  }
}
