/**
 * The tab side: `createClient()` finds the profile's engine (SharedWorker, else a leader tab,
 * else its own), and turns the engine's messages into feeds and a status for this tab.
 */
import { wrap, proxy, transfer } from "comlink";
import { fromErrorPayload, InvalidArgumentError, MAX_INITIAL_EVENTS, type ErrorPayload, type TidemarkError } from "@tidemark/shared";
import { defaultBackoff } from "../backoff.js";
import { keepErrorCodes } from "../comlink-errors.js";
import { watchLifeline } from "../lifeline.js";
import { tabPort } from "../tab-wire.js";
import { TabFeed, type Feed, type FeedOwner } from "./tab-feed.js";
import type { Client, ClientOptions, ClientState, Transport } from "./client-types.js";
import type { EngineApi, EngineConfig, EngineStats, FeedSpec, OpenRequest, ReadMark, TabMessage } from "../types.js";

export type { Feed, ItemsInfo } from "./tab-feed.js";
export type { Client, ClientOptions, ClientState, Transport } from "./client-types.js";

/**
 * Connects this tab to the profile's shared connection.
 *
 * @example
 * const client = createClient({ url: "/ws", getToken: () => fetch("/token").then((r) => r.text()) });
 * const feed = client.feed<{ text: string }>({ topic: "notifications", tenantId: "acme" });
 * feed.onItems((items) => render(items));
 */
export function createClient(options: ClientOptions): Client {
  return new TabClient(options);
}

let counter = 0;
const randomId = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}-${++counter}`;


class TabClient implements Client, FeedOwner {
  readonly tabId = randomId();
  state: ClientState;
  private engine: EngineApi | undefined;
  private readonly config: EngineConfig;
  private readonly feeds = new Map<string, TabFeed<unknown>>();
  private readonly stateListeners = new Set<(state: ClientState) => void>();
  private readonly cleanups: (() => void)[] = [];
  private closed = false;
  private attaching: Promise<void> | undefined;
  /** This tab's end of the port the SharedWorker sends its packets on (a new one per attach). */
  private port: { close(): void } | undefined;
  /** Stops waiting for the current SharedWorker's lifeline (lifeline.ts). */
  private unwatchWorker: (() => void) | undefined;

  constructor(private readonly options: ClientOptions) {
    if (typeof options?.url !== "string" || options.url === "") throw new InvalidArgumentError("createClient: `url` is required");
    const historyLimit = options.historyLimit ?? 200;
    if (!Number.isInteger(historyLimit) || historyLimit < 1) throw new InvalidArgumentError("createClient: `historyLimit` must be a positive integer");
    this.config = {
      url: toWebSocketUrl(options.url),
      backoff: { ...defaultBackoff, ...options.reconnect },
      historyLimit,
      tabTimeoutMs: options.tabTimeoutMs ?? 90_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 20_000,
      tokenRefreshMs: options.tokenRefreshMs ?? 0,
      database: options.database ?? "tidemark",
      principal: options.principal ?? null,
    };
    keepErrorCodes();
    this.state = { status: "connecting", tabs: 1, transport: "direct" };
    this.start();
  }

  get name(): string {
    return `tidemark:${this.config.database}:${this.config.url}`;
  }

  private start(): void {
    const mode = this.options.transport ?? "auto";
    const canShare = typeof SharedWorker !== "undefined" && this.options.worker !== false;
    const canLead = typeof BroadcastChannel !== "undefined" && typeof navigator !== "undefined" && navigator.locks !== undefined;
    if (mode === "shared-worker" || (mode === "auto" && canShare)) {
      this.connectWorker();
    } else if (mode === "leader" || (mode === "auto" && canLead)) {
      // The engine only ships to tabs that need it: a separate chunk for bundlers.
      void import("./leader.js").then(({ joinElection }) => {
        if (this.closed) return;
        const election = joinElection(this.name, this.tabId, {
          onEngine: (engine, role) => this.use(engine, role),
          onPush: (message) => this.receive(message),
        });
        this.cleanups.push(() => election.leave());
      });
    } else {
      void import("../engine.js").then(({ Engine }) => this.closed || this.use(new Engine(), "direct"));
    }
    this.watchPage();
  }

  /** (Re)connects to the profile's SharedWorker; the browser hands back the running one if any. */
  private connectWorker(): void {
    const worker = this.options.worker
      ? this.options.worker()
      : new SharedWorker(new URL("../worker.js", import.meta.url), { type: "module", name: this.name });
    worker.port.start();
    this.use(wrap<EngineApi>(worker.port) as unknown as EngineApi, "shared-worker");
  }

  private use(engine: EngineApi, transport: Transport): void {
    this.engine = engine;
    this.setState({ ...this.state, transport });
    void this.attach();
  }

  private attach(): Promise<void> {
    const engine = this.engine;
    if (!engine || this.closed) return Promise.resolve();
    const listener = (message: TabMessage) => this.receive(message);
    const remote = this.state.transport === "shared-worker";
    const getToken = this.options.getToken;
    const focused = typeof document !== "undefined" && document.hasFocus();
    // The previous port still takes what the worker sent on it until the new one is in place.
    const previous = this.port;
    this.port = undefined;
    let wire = listener;
    if (remote) {
      // The worker sends packets of messages on a port of this tab's, one way (tab-wire.ts).
      const port = (this.port = tabPort(listener));
      wire = transfer(port.remote, [port.remote]) as unknown as typeof listener;
    }
    this.attaching = engine
      .attach(
        { id: this.tabId, focused },
        this.config,
        wire,
        getToken ? (remote ? proxy(() => getToken()) : getToken) : undefined,
      )
      .then(async (reply) => {
        if (remote && reply?.lifeline !== undefined) this.watchWorker(engine, reply.lifeline);
        if (typeof navigator !== "undefined" && navigator.onLine === false) await engine.network(this.tabId, false);
        await Promise.all([...this.feeds.values()].map((f) => engine.open(this.tabId, { ...f.request })));
      })
      // A failed attach (the worker died or refused the config) must not reject every later call
      // chained on `attaching`; the worker reports its state to the tab through the listener.
      .catch(() => undefined)
      .finally(() => previous?.close());
    return this.attaching;
  }

  /**
   * Waits for the SharedWorker's lifeline: granted, the worker is gone (killed, crashed). The tab
   * stops showing `live` at once (no socket is open now) and starts a new worker, which resumes
   * every feed from the cursor its predecessor saved; the tab shows nothing twice (TabView).
   */
  private watchWorker(engine: EngineApi, lifeline: string): void {
    this.unwatchWorker?.();
    this.unwatchWorker = watchLifeline(lifeline, () => {
      if (engine !== this.engine || this.closed) return;
      const { connectionId: _gone, ...rest } = this.state;
      this.setState({ ...rest, status: this.state.status === "live" ? "resuming" : this.state.status });
      this.connectWorker();
    });
  }

  private watchPage(): void {
    const every = this.options.heartbeatMs ?? 5_000;
    let misses = 0;
    const beat = setInterval(() => {
      const engine = this.engine;
      if (!engine) return;
      let answered = false;
      engine.heartbeat(this.tabId).then(
        (known) => {
          answered = true;
          misses = 0;
          if (!known && engine === this.engine) void this.attach();
        },
        () => undefined,
      );
      // A worker that crashed answers nothing, ever: after three silent beats, connect again.
      setTimeout(() => {
        if (answered || engine !== this.engine) return;
        if (++misses >= 3 && this.state.transport === "shared-worker") {
          misses = 0;
          this.connectWorker();
        }
      }, every);
    }, every);
    this.cleanups.push(() => clearInterval(beat));
    if (typeof window === "undefined") return;
    const on = <K extends keyof WindowEventMap>(target: Window | Document, type: K | "visibilitychange", fn: (e: Event) => void) => {
      target.addEventListener(type, fn);
      this.cleanups.push(() => target.removeEventListener(type, fn));
    };
    // Hints to the worker, fire-and-forget: a call that fails means the worker is gone, and the
    // next attach sends the tab's state again.
    on(window, "online", () => void this.engine?.network(this.tabId, true).catch(() => undefined));
    on(window, "offline", () => void this.engine?.network(this.tabId, false).catch(() => undefined));
    on(window, "focus", () => void this.engine?.focus(this.tabId, true).catch(() => undefined));
    on(window, "blur", () => void this.engine?.focus(this.tabId, false).catch(() => undefined));
    on(document, "visibilitychange", () => {
      if (document.visibilityState === "visible") void this.engine?.visible(this.tabId).catch(() => undefined);
    });
    // A closing tab sends no goodbye of its own: say it on pagehide (the heartbeat covers crashes).
    on(window, "pagehide", () => {
      void this.engine?.detach(this.tabId).catch(() => undefined);
    });
    on(window, "pageshow", (e) => {
      if ((e as PageTransitionEvent).persisted) void this.attach();
    });
  }

  private receive(message: TabMessage): void {
    if (message.type === "status") {
      const { status, tabs, connectionId } = message;
      const error = this.errorOf(message.error);
      // Said once per tab and error, where a developer looks: the worker's console is apart.
      if (error && error !== this.state.error) console.error(`tidemark: the connection failed (${error.code}): ${error.message}`);
      this.setState({ status, tabs, transport: this.state.transport, ...(connectionId ? { connectionId } : {}), ...(error ? { error } : {}) });
      for (const feed of this.feeds.values()) feed.connectionFailed(error);
      return;
    }
    this.feeds.get(message.sub)?.receive(message);
  }

  /** The connection's error as a class; the same object while the engine reports the same one. */
  private errorOf(payload: ErrorPayload | undefined): TidemarkError | undefined {
    if (!payload) return undefined;
    const current = this.state.error;
    if (current && current.code === payload.code && current.message === payload.message) return current;
    return fromErrorPayload(payload);
  }

  private setState(state: ClientState): void {
    this.state = state;
    for (const l of this.stateListeners) l(state);
  }

  onState(listener: (state: ClientState) => void): () => void {
    this.stateListeners.add(listener);
    listener(this.state);
    return () => this.stateListeners.delete(listener);
  }

  feed<T>(spec: FeedSpec): Feed<T> {
    return this.openFeed<T>(spec, "hub");
  }

  live<T>(spec: FeedSpec): Feed<T> {
    return this.openFeed<T>(spec, "live");
  }

  private openFeed<T>(spec: FeedSpec, mode: "hub" | "live"): Feed<T> {
    if (this.closed) throw new Error("client is closed");
    if (typeof spec?.topic !== "string" || spec.topic === "") throw new InvalidArgumentError("feed: `topic` is required");
    const request: OpenRequest = { id: randomId(), mode, topic: spec.topic, effects: false };
    if (spec.tenantId !== undefined) request.tenantId = spec.tenantId;
    if (spec.initial !== undefined) {
      if (mode !== "hub") throw new InvalidArgumentError("live: `initial` is for client.feed() only (a live feed has no history)");
      request.initial = firstPage(spec.initial);
    }
    const feed = new TabFeed<T>(request, this.config.historyLimit, this);
    this.feeds.set(request.id, feed as unknown as TabFeed<unknown>);
    // The connection already failed: the feed says so from the start.
    feed.connectionFailed(this.state.error);
    // Listeners are usually added right after feed(): open once they are known.
    queueMicrotask(() => {
      if (this.feeds.get(request.id) === feed) this.reopen(feed);
    });
    return feed;
  }

  /** @internal */
  reopen(feed: { request: OpenRequest }): void {
    const engine = this.engine;
    if (!engine) return;
    const request = { ...feed.request };
    // Fire-and-forget like the hints above: a lost worker reopens every feed on the next attach.
    void (this.attaching ?? Promise.resolve()).then(() => engine.open(this.tabId, request)).catch(() => undefined);
  }

  /** @internal */
  async markRead(feed: { request: OpenRequest }, mark: ReadMark): Promise<void> {
    const engine = this.engine;
    if (!engine || this.feeds.get(feed.request.id) !== feed) return;
    await (this.attaching ?? Promise.resolve());
    await engine.markRead(this.tabId, feed.request.id, mark);
  }

  /** @internal */
  closeFeed(feed: { request: OpenRequest }): void {
    if (!this.feeds.delete(feed.request.id)) return;
    void this.engine?.close(this.tabId, feed.request.id).catch(() => undefined);
  }

  stats(): Promise<EngineStats> {
    if (!this.engine) return Promise.reject(new Error("no engine yet"));
    return this.engine.stats();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.engine?.detach(this.tabId).catch(() => undefined);
    this.unwatchWorker?.();
    this.port?.close();
    for (const c of this.cleanups) c();
    this.feeds.clear();
  }
}

/** Checks `FeedSpec.initial` once, naming the bad field; `since` becomes ms. */
function firstPage(initial: NonNullable<FeedSpec["initial"]>): NonNullable<OpenRequest["initial"]> {
  if (typeof initial === "object" && initial !== null && "last" in initial) {
    const n = initial.last;
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INITIAL_EVENTS) {
      throw new InvalidArgumentError(`feed: \`initial.last\` must be an integer from 1 to ${MAX_INITIAL_EVENTS}, got ${String(n)}`);
    }
    return { last: n };
  }
  const raw = (initial as { since?: unknown } | null)?.since;
  const since = raw instanceof Date ? raw.getTime() : raw;
  if (typeof since !== "number" || !Number.isFinite(since)) {
    throw new InvalidArgumentError("feed: `initial` must be { last: n } or { since: Date | ms }");
  }
  return { since };
}

/** `/ws` or `https://host/ws` -> `ws(s)://host/ws`, resolved against the page. */
function toWebSocketUrl(url: string): string {
  const base = typeof location !== "undefined" ? location.href : "http://localhost/";
  const u = new URL(url, base);
  if (u.protocol === "http:") u.protocol = "ws:";
  else if (u.protocol === "https:") u.protocol = "wss:";
  return u.toString();
}
