/**
 * The engine's feeds: each one's saved history (see history.ts), its one server subscription
 * on the current socket (see wire-table.ts), and its state (`FeedState` in model.ts), which
 * only this class changes. The server's frames reach the feeds through the methods here
 * (frames.ts names which).
 *
 * A hub feed's saved history is shown once the server accepted (or refused) the subscription
 * on the current socket, or at once while the server cannot be reached (offline first): a
 * feed the server refuses never shows what was saved of it, and a user who signs in on a shared
 * profile never sees the previous user's history while the server is asked who they are.
 */
import {
  ErrorCode,
  type ReadStateFrame,
  type CaughtUpFrame,
  type ErrorFrame,
  type ErrorPayload,
  type EventFrame,
  type RefreshedFrame,
  type ResetFrame,
  type SubscribedFrame,
  type UnsubscribedFrame,
  type WelcomeFrame,
} from "@tidemark/shared";
import { FeedLog, feedKey } from "../feed-log.js";
import { tabStatus, type Status } from "../state.js";
import type { EngineConfig, OpenRequest, ReadMark } from "../types.js";
import type { Delivery } from "./delivery.js";
import type { History } from "./history.js";
import type { Feed, FeedState, FeedStateChange, Member, Tab } from "./model.js";
import type { Socket } from "./socket.js";
import type { TokenSource } from "./tokens.js";
import { WireTable } from "./wire-table.js";
import { Reads } from "./reads.js";

/** Live feeds keep a few items only, for duplicate checks. */
const LIVE_LIMIT = 16;

/** What Feeds writes; everyone else reads a `Feed`. */
type Writable = { -readonly [K in keyof Feed]: Feed[K] };

/** @internal What the feeds work with; built before them by the engine. */
export interface FeedsParts {
  config: EngineConfig;
  socket: Socket;
  history: History;
  tokens: TokenSource;
  delivery: Delivery;
  /** Told each change of a feed's state. */
  feedState?: (change: FeedStateChange) => void;
}

/** @internal */
export class Feeds {
  readonly #parts: FeedsParts;
  readonly #byKey = new Map<string, Feed>();
  readonly #wire = new WireTable();
  /** The server named the principal on the current socket: subscriptions may go out. */
  #confirmed = false;
  /** Live once: a later connection is a resume. */
  #wasLive = false;
  /** Subscriptions to ask again later (the server was busy); cleared on stop. */
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  /** Feeds asked for a first page on this socket, until they catch up: their replay is no effect. */
  readonly #paging = new Set<Feed>();
  /** The feeds' read state on the wire. */
  readonly #reads: Reads;

  constructor(parts: FeedsParts) {
    this.#parts = parts;
    this.#reads = new Reads(parts, this.#wire, this.#retries);
  }

  /** Every feed, in the order they were opened. */
  all(): IterableIterator<Feed> {
    return this.#byKey.values();
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** The one place a feed's state changes. */
  #set(feed: Feed, state: FeedState): void {
    const oldState = feed.state;
    (feed as Writable).state = state;
    if (oldState.kind !== state.kind || (oldState.kind === "saved" && state.kind === "saved" && oldState.shown !== state.shown)) {
      this.#parts.feedState?.({ key: feed.key, oldState, newState: state });
    }
  }

  /** Off the live edge (asked again, or the socket went): a caught-up feed is subscribed still. */
  #leaveEdge(feed: Feed): void {
    if (feed.state.kind === "caught_up") this.#set(feed, { kind: "subscribed" });
  }

  /** The server accepted it on this socket (or will be asked again soon): saved history may be shown. */
  #accepted(feed: Feed): boolean {
    const { state } = feed;
    return state.kind === "subscribed" || state.kind === "caught_up" || (state.kind === "saved" && state.shown);
  }

  /** `welcome`: once the history of the principal it names is loaded, every feed subscribes. */
  welcomed(frame: WelcomeFrame): void {
    const { socket, history, delivery } = this.#parts;
    void history.ready.then(() => {
      if (socket.state.kind !== "open" || socket.state.connectionId !== frame.connectionId) return;
      this.#reads.revision = frame.revision ?? 0;
      // An older server names no principal: one history for the profile, as before.
      this.adopt(frame.principal ?? "");
      this.#confirmed = true;
      for (const feed of this.#byKey.values()) this.#subscribe(feed);
      delivery.broadcastStatus();
    });
  }

  /** The principal is now `principal`: every feed leaves the socket and loads that one's history. */
  adopt(principal: string | undefined): void {
    if (!this.#parts.history.adopt(principal)) return;
    for (const feed of this.#byKey.values()) {
      this.#unwire(feed);
      this.#parts.delivery.clear(feed);
      this.#load(feed);
    }
    this.#parts.delivery.broadcastStatus();
  }

  /** The socket is gone (or about to be): forget its subscriptions (saved history stays). */
  forgetWire(): void {
    this.#wire.clear();
    this.#paging.clear();
    this.#reads.forget();
    for (const feed of this.#byKey.values()) {
      if (this.#accepted(feed)) this.#set(feed, { kind: "saved", shown: false });
    }
  }

  /**
   * A tab opens `request`: the feed of its key, made if new. `previous` is the feed the tab's
   * subscription of that id had: a refused feed opened anew (not the tab's re-open of the same
   * subscription, as `onEffect` makes) is asked again, and shows nothing saved until answered.
   */
  open(request: OpenRequest, previous: Feed | undefined): Feed {
    const key = feedKey(request.mode, request.topic, request.tenantId);
    const feed = this.#byKey.get(key);
    if (!feed) return this.#create(key, request);
    if (feed.state.kind === "refused" && !this.#wire.has(feed) && previous !== feed) {
      this.#set(feed, { kind: "saved", shown: false });
      this.#subscribe(feed);
    }
    return feed;
  }

  #create(key: string, request: OpenRequest): Feed {
    const feed: Feed = {
      key,
      request: { mode: request.mode, topic: request.topic, tenantId: request.tenantId, initial: request.mode === "hub" ? request.initial : undefined },
      log: undefined,
      loaded: Promise.resolve(),
      members: new Set(),
      state: { kind: "loading" },
    };
    // Registered before loading starts: the loader only completes a feed that is still the
    // registered one.
    this.#byKey.set(key, feed);
    this.#load(feed);
    return feed;
  }

  #limit(feed: Feed): number {
    return feed.request.mode === "hub" ? this.#parts.config.historyLimit : LIVE_LIMIT;
  }

  /** Reads the feed's saved history for the current principal, then shows and subscribes it. */
  #load(feed: Feed): void {
    const writable = feed as Writable;
    writable.log = undefined;
    this.#set(feed, { kind: "loading" });
    const loaded = this.#parts.history.read(feed, this.#limit(feed)).then((log) => {
      // Only the feed's newest load counts. A read can finish in the turn in which `welcome`
      // starts the read for the principal it names (the first IndexedDB open is slow): that
      // older read's log must not be subscribed, then replaced under the subscription.
      if (!log || this.#byKey.get(feed.key) !== feed || feed.loaded !== loaded) return;
      writable.log = log;
      this.#set(feed, { kind: "saved", shown: false });
      this.#parts.delivery.release(feed);
      this.#subscribe(feed);
    });
    writable.loaded = loaded;
  }

  mayShow(feed: Feed): boolean {
    if (feed.request.mode === "live" || this.#accepted(feed) || feed.state.kind === "refused") return true;
    const kind = this.#parts.socket.state.kind;
    return kind !== "connecting" && kind !== "open";
  }

  /** A tab's member left: the last one out ends the feed. */
  leave(member: Member): void {
    const feed = member.feed;
    feed.members.delete(member);
    if (feed.members.size > 0) return;
    this.#byKey.delete(feed.key);
    this.#unwire(feed);
  }

  /** Ends the feed's subscription on the socket, if it has one. */
  #unwire(feed: Feed): void {
    const id = this.#wire.remove(feed);
    if (id !== undefined) this.#parts.socket.send({ type: "unsubscribe", id });
  }

  #subscribe(feed: Feed): void {
    const { socket } = this.#parts;
    const { log, state } = feed;
    if (!log || state.kind === "loading" || state.kind === "refused" || !this.#confirmed || socket.state.kind !== "open" || this.#wire.has(feed)) return;
    const id = this.#wire.add(feed);
    this.#reads.forget(feed);
    const { mode, topic, tenantId } = feed.request;
    const cursor = mode === "hub" ? log.cursor : undefined;
    const inbox = mode === "hub" && this.#reads.inbox;
    // Only a feed with no saved state starts from a first page; a reset leaves the head saved.
    const initial = inbox && cursor === undefined ? feed.request.initial : undefined;
    if (initial) this.#paging.add(feed);
    else this.#paging.delete(feed);
    this.#leaveEdge(feed);
    socket.send({
      type: "subscribe",
      id,
      topic,
      mode,
      ...(tenantId === undefined ? {} : { tenantId }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(initial ? { initial } : {}),
      ...(inbox ? { read: true } : {}),
    });
  }

  /** `event`: a new event of a hub, to every feed on it. */
  event(frame: EventFrame): void {
    const { delivery, history } = this.#parts;
    for (const feed of this.#wire.onHub(frame.hub)) {
      const item = feed.log?.addEvent(frame.event);
      if (!item || !feed.log) continue;
      // A first page is history to the user: no sound for each of its events.
      delivery.deliver(feed, [item], this.#paging.has(feed));
      history.mark(feed.log);
    }
  }

  /** `subscribed`: the hub's events come to the feed, which may be shown. */
  subscribed(frame: SubscribedFrame): void {
    const feed = this.#wire.accept(frame.id, frame.hub);
    if (!feed) return;
    if (feed.state.kind !== "caught_up") this.#set(feed, { kind: "subscribed" });
    this.#parts.delivery.release(feed);
    this.#reads.push(feed); // reads made while offline
    // A live subscription has nothing to replay: it is at the live edge once it exists
    // (whether or not the server also sends `caught_up` for it).
    if (feed.request.mode === "live" && feed.state.kind !== "caught_up") this.#reachedEdge(feed);
  }

  /** `caught_up`: the feed is at the live edge; its cursor is a watermark. */
  caughtUp(frame: CaughtUpFrame): void {
    const feed = this.#wire.feed(frame.id);
    if (!feed) return;
    // Items before the status they lead to.
    this.#parts.delivery.flush();
    if (feed.request.mode === "hub" && feed.log && frame.cursor) {
      // A watermark: keeps an idle tenant's cursor ahead of retention.
      feed.log.addWatermark(frame.cursor);
      this.#parts.history.mark(feed.log);
    }
    this.#reachedEdge(feed);
  }

  /** `reset`: the cursor sent is dropped for `head`, so a reconnect never sends it again. */
  reset(frame: ResetFrame): void {
    const feed = this.#wire.feed(frame.id);
    if (!feed?.log) return;
    this.#parts.delivery.deliver(feed, [feed.log.addGap(frame.reason, frame.head, frame.message)]);
    this.#parts.history.mark(feed.log);
  }

  /** `refreshed`: the new token may be another user's: that one's history, subscribed again. */
  refreshed(frame: RefreshedFrame): void {
    this.#parts.tokens.schedule(frame.expiresAt);
    if (frame.principal !== undefined) this.adopt(frame.principal);
  }

  #reachedEdge(feed: Feed): void {
    this.#paging.delete(feed);
    this.#set(feed, { kind: "caught_up" });
    if (!this.#wasLive && this.#allCaughtUp()) this.#wasLive = true;
    this.#parts.delivery.caughtUp(feed);
    this.#parts.delivery.broadcastStatus();
  }

  /**
   * `unsubscribed` or `error`: the server ended or refused a subscription; what can be retried
   * is, the rest is reported. Without an `id` it is not about one feed.
   */
  ended(frame: UnsubscribedFrame | ErrorFrame): void {
    if (frame.type === "error" && frame.ref !== undefined) return this.#reads.refused(frame);
    if (frame.id === undefined) {
      if (frame.code === ErrorCode.Unauthorized) this.#parts.tokens.forget();
      return;
    }
    if (frame.code === undefined) return;
    const feed = this.#wire.removeId(frame.id);
    if (!feed) return;
    this.#end(feed, frame.code, frame.message ?? "", frame.type === "error" ? frame.retryAfterMs : undefined);
  }

  #end(feed: Feed, code: ErrorPayload["code"], message: string, retryAfterMs: number | undefined): void {
    const { delivery, history, tokens } = this.#parts;
    this.#leaveEdge(feed);
    switch (code) {
      case ErrorCode.Unauthorized:
        // Once per profile: one refresh serves every feed and tab. What was shown stays shown.
        if (this.#accepted(feed)) this.#set(feed, { kind: "saved", shown: true });
        void tokens.refresh().then(() => this.#subscribe(feed));
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
      (feed as Writable).log = new FeedLog({ key: feed.log.key, lastN: feed.log.lastN, items: [] }, this.#limit(feed));
      history.mark(feed.log);
      delivery.clear(feed);
    }
    this.#set(feed, { kind: "refused", error: { code, name: "TidemarkError", message } });
    delivery.refused(feed);
    delivery.release(feed);
    delivery.broadcastStatus();
  }

  /** Not a refusal of access: what is saved may be shown meanwhile, and the server asked again. */
  #retry(feed: Feed, ms: number): void {
    this.#set(feed, { kind: "saved", shown: true });
    this.#parts.delivery.release(feed);
    const timer = setTimeout(() => {
      this.#retries.delete(timer);
      if (this.#byKey.get(feed.key) === feed) this.#subscribe(feed);
    }, ms);
    this.#retries.add(timer);
  }

  // ---- read state (reads.ts) ----

  /** `read_state`: the principal's read state of a feed. */
  readState(frame: ReadStateFrame): void {
    this.#reads.readState(frame);
  }

  /** A tab marks read (see Reads.markRead). */
  markRead(feed: Feed, mark: ReadMark): Promise<void> {
    return this.#reads.markRead(feed, mark);
  }

  /** A tab's status; without a tab, the whole engine's. */
  status(tab: Tab | undefined): Status {
    return tabStatus(this.#parts.socket.state, this.#wasLive, this.#allCaughtUp(tab));
  }

  #allCaughtUp(tab?: Tab): boolean {
    const feeds = tab ? [...tab.subs.values()].map((m) => m.feed) : [...this.#byKey.values()];
    return feeds.every((f) => f.state.kind === "caught_up" || f.state.kind === "refused");
  }

  /** The socket's state changed: off the open state, nothing of the socket holds any more. */
  socketChanged(open: boolean): void {
    if (!open) {
      this.#confirmed = false;
      this.forgetWire();
    }
    // The server cannot be asked now: held snapshots of saved history are shown.
    for (const feed of this.#byKey.values()) this.#parts.delivery.release(feed);
    this.#parts.delivery.broadcastStatus();
  }

  /** Cancels planned retries (shutdown). */
  stop(): void {
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
  }
}
