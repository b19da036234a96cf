/**
 * The engine's feeds: each one's saved history (see history.ts), its one server subscription
 * on the current socket (see wire-table.ts), and whether it may be shown yet. What the server's
 * frames do to them is in frames.ts.
 *
 * A hub feed's saved history is shown once the server accepted (or refused) the subscription
 * on the current socket, or at once while the server cannot be reached (offline first): a
 * feed the server refuses never shows what was saved of it, and a user who signs in on a shared
 * profile never sees the previous user's history while the server is asked who they are.
 */
import { ErrorCode, type ErrorPayload, type WelcomeFrame } from "@tidemark/shared";
import { FeedLog } from "../feed-log.js";
import { tabStatus, type Status } from "../state.js";
import type { EngineConfig, OpenRequest } from "../types.js";
import type { Delivery } from "./delivery.js";
import type { History } from "./history.js";
import type { Feed, Member, Tab } from "./model.js";
import type { Socket } from "./socket.js";
import type { TokenSource } from "./tokens.js";
import { WireTable } from "./wire-table.js";

/** Live feeds keep a few items only, for duplicate checks. */
const LIVE_LIMIT = 16;

/** @internal What the feeds work with; built before them by the engine. */
export interface FeedsParts {
  config: EngineConfig;
  socket: Socket;
  history: History;
  tokens: TokenSource;
  delivery: Delivery;
}

/** @internal */
export class Feeds {
  readonly config: EngineConfig;
  readonly socket: Socket;
  readonly history: History;
  readonly tokens: TokenSource;
  readonly delivery: Delivery;
  readonly byKey = new Map<string, Feed>();
  readonly wire = new WireTable();
  /** The server named the principal on the current socket: subscriptions may go out. */
  #confirmed = false;
  /** Live once: a later connection is a resume. */
  #wasLive = false;
  /** Subscriptions to ask again later (the server was busy); cleared on stop. */
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();

  constructor(parts: FeedsParts) {
    ({ config: this.config, socket: this.socket, history: this.history, tokens: this.tokens, delivery: this.delivery } = parts);
  }

  /** `welcome`: once the history of the principal it names is loaded, every feed subscribes. */
  welcomed(frame: WelcomeFrame): void {
    const { socket, history, delivery } = this;
    void history.ready.then(() => {
      if (socket.state.kind !== "open" || socket.state.connectionId !== frame.connectionId) return;
      // An older server names no principal: one history for the profile, as before.
      this.adopt(frame.principal ?? "");
      this.#confirmed = true;
      for (const feed of this.byKey.values()) this.subscribe(feed);
      delivery.broadcastStatus();
    });
  }

  /** The principal is now `principal`: every feed leaves the socket and loads that one's history. */
  adopt(principal: string | undefined): void {
    if (!this.history.adopt(principal)) return;
    for (const feed of this.byKey.values()) {
      this.#unwire(feed);
      feed.refused = undefined;
      feed.accepted = false;
      feed.caughtUp = false;
      this.delivery.clear(feed);
      this.#load(feed);
    }
    this.delivery.broadcastStatus();
  }

  /** The socket is gone (or about to be): forget its subscriptions (saved history stays). */
  forgetWire(): void {
    this.wire.clear();
    for (const feed of this.byKey.values()) feed.accepted = false;
  }

  create(key: string, request: OpenRequest): Feed {
    const feed: Feed = {
      key,
      request: { mode: request.mode, topic: request.topic, tenantId: request.tenantId },
      log: undefined,
      loaded: Promise.resolve(),
      members: new Set(),
      caughtUp: false,
      accepted: false,
      refused: undefined,
    };
    // Registered before loading starts: the loader only completes a feed that is still the
    // registered one.
    this.byKey.set(key, feed);
    this.#load(feed);
    return feed;
  }

  limit(feed: Feed): number {
    return feed.request.mode === "hub" ? this.config.historyLimit : LIVE_LIMIT;
  }

  /** Reads the feed's saved history for the current principal, then shows and subscribes it. */
  #load(feed: Feed): void {
    feed.log = undefined;
    feed.loaded = this.history.read(feed, this.limit(feed)).then((log) => {
      if (!log || this.byKey.get(feed.key) !== feed) return;
      feed.log = log;
      this.delivery.release(feed);
      this.subscribe(feed);
    });
  }

  mayShow(feed: Feed): boolean {
    if (feed.request.mode === "live" || feed.accepted || feed.refused) return true;
    const kind = this.socket.state.kind;
    return kind !== "connecting" && kind !== "open";
  }

  /** A tab's member left: the last one out ends the feed. */
  leave(member: Member): void {
    const feed = member.feed;
    feed.members.delete(member);
    if (feed.members.size > 0) return;
    this.byKey.delete(feed.key);
    this.#unwire(feed);
  }

  /** Ends the feed's subscription on the socket, if it has one. */
  #unwire(feed: Feed): void {
    const id = this.wire.remove(feed);
    if (id !== undefined) this.socket.send({ type: "unsubscribe", id });
  }

  subscribe(feed: Feed): void {
    const { socket } = this;
    if (!feed.log || feed.refused || !this.#confirmed || socket.state.kind !== "open" || this.wire.has(feed)) return;
    const id = this.wire.add(feed);
    const { mode, topic, tenantId } = feed.request;
    const cursor = mode === "hub" ? feed.log.cursor : undefined;
    feed.caughtUp = false;
    socket.send({
      type: "subscribe",
      id,
      topic,
      mode,
      ...(tenantId === undefined ? {} : { tenantId }),
      ...(cursor === undefined ? {} : { cursor }),
    });
  }

  reachedEdge(feed: Feed): void {
    feed.caughtUp = true;
    if (!this.#wasLive && this.#allCaughtUp()) this.#wasLive = true;
    this.delivery.caughtUp(feed);
    this.delivery.broadcastStatus();
  }

  /** The server ended or refused a subscription: retry what can be retried, report the rest. */
  ended(feed: Feed, code: ErrorPayload["code"], message: string, retryAfterMs: number | undefined): void {
    const { delivery, history, tokens } = this;
    feed.caughtUp = false;
    switch (code) {
      case ErrorCode.Unauthorized:
        // Once per profile: one refresh serves every feed and tab.
        void tokens.refresh().then(() => this.subscribe(feed));
        return;
      case ErrorCode.BrokerUnavailable:
      case ErrorCode.Internal:
        this.#retry(feed, 2_000 + Math.random() * 3_000);
        return;
      case ErrorCode.LimitExceeded:
        if (retryAfterMs !== undefined) {
          this.#retry(feed, retryAfterMs);
          return;
        }
        break;
    }
    if (code === ErrorCode.Forbidden && feed.log) {
      // No access: what was saved of the feed is not shown, and not kept.
      feed.log = new FeedLog({ key: feed.log.key, lastN: feed.log.lastN, items: [] }, this.limit(feed));
      history.mark(feed.log);
      delivery.clear(feed);
    }
    feed.refused = { code, name: "TidemarkError", message };
    delivery.refused(feed);
    delivery.release(feed);
    delivery.broadcastStatus();
  }

  /** Not a refusal of access: what is saved may be shown meanwhile, and the server asked again. */
  #retry(feed: Feed, ms: number): void {
    feed.accepted = true;
    this.delivery.release(feed);
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (this.byKey.get(feed.key) === feed) this.subscribe(feed);
    }, ms);
    this.#retries.add(timer);
  }

  /** A tab's status; without a tab, the whole engine's. */
  status(tab: Tab | undefined): Status {
    return tabStatus(this.socket.state, this.#wasLive, this.#allCaughtUp(tab));
  }

  #allCaughtUp(tab?: Tab): boolean {
    const feeds = tab ? [...tab.subs.values()].map((m) => m.feed) : [...this.byKey.values()];
    return feeds.every((f) => f.caughtUp || f.refused !== undefined);
  }

  /** The socket's state changed: off the open state, nothing of the socket holds any more. */
  socketChanged(open: boolean): void {
    if (!open) {
      this.#confirmed = false;
      this.forgetWire();
      for (const feed of this.byKey.values()) feed.caughtUp = false;
    }
    // The server cannot be asked now: held snapshots of saved history are shown.
    for (const feed of this.byKey.values()) this.delivery.release(feed);
    this.delivery.broadcastStatus();
  }

  /** Cancels planned retries (shutdown). */
  stop(): void {
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
  }
}
