/**
 * What the engine sends its tabs: snapshots (once a feed may be shown), batched new items,
 * effects in one tab, and each tab's status. Messages to one tab keep their order.
 */
import { pickEffectTab } from "./effects.js";
import type { FeedLog } from "../feed-log.js";
import { refusalOf, type Feed, type Member, type Tab } from "./model.js";
import type { Status } from "../state.js";
import type { ErrorPayload } from "@tidemark/shared";
import type { FeedItem, TabMessage } from "../types.js";

/**
 * Shortest time between two items messages to a tab: about one animation frame. A tab renders at
 * most once a frame, so during a burst a message per frame is all it can use; each message costs
 * a structured clone in the engine, a task and an app render (and a layout) in every tab.
 */
export const FLUSH_INTERVAL_MS = 16;

/** @internal What delivery needs to know of the engine. */
export interface DeliveryContext {
  tabs(): Iterable<Tab>;
  tabCount(): number;
  status(tab: Tab): Status;
  connectionId(): string | undefined;
  /** Why the connection failed (status `failed`), else undefined. */
  error(): ErrorPayload | undefined;
  /** The feed's saved history may be shown (see Feeds.mayShow). */
  mayShow(feed: Feed): boolean;
}

/** @internal */
export class Delivery {
  private readonly outbox = new Map<Feed, FeedItem[]>();
  /** Feeds whose queued items are a first page: no effects for them. */
  private readonly quiet = new Set<Feed>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the last items went out (performance.now()); -Infinity: never. */
  private lastFlush = -Infinity;

  constructor(private readonly context: DeliveryContext) {}

  /**
   * Queues items for the feed's tabs. Frames that arrive together (a replay, a burst) go out as
   * one message per tab: a postMessage per event per tab costs more than the event itself. The
   * first items after a quiet spell leave at once (next task); during a burst, at most once per
   * {@link FLUSH_INTERVAL_MS}.
   */
  deliver(feed: Feed, items: FeedItem[], quiet = false): void {
    if (quiet) this.quiet.add(feed);
    const queued = this.outbox.get(feed);
    if (queued) queued.push(...items);
    else this.outbox.set(feed, items.slice());
    this.flushTimer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + FLUSH_INTERVAL_MS - performance.now()));
  }

  /** Sends the queued items now (also before a snapshot or a status they must precede). */
  flush(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.outbox.size === 0) return;
    this.lastFlush = performance.now();
    const batches = [...this.outbox];
    const quiet = new Set(this.quiet);
    this.outbox.clear();
    this.quiet.clear();
    for (const [feed, items] of batches) {
      const effectTab = quiet.has(feed) ? undefined : pickEffectTab([...feed.members].filter((m) => m.effects && m.ready).map((m) => m.tab));
      for (const m of feed.members) {
        if (!m.ready) continue;
        this.send(m.tab, { type: "items", sub: m.subId, items, effects: m.tab === effectTab && m.effects });
      }
    }
  }

  /** Sends the snapshot to the feed's members that have none yet, once the feed may be shown. */
  release(feed: Feed): void {
    const log = feed.log;
    if (!log || !this.context.mayShow(feed)) return;
    const waiting = [...feed.members].filter((m) => !m.ready);
    if (waiting.length === 0) return;
    // Items before the snapshot that includes them would be sent twice: flush first.
    this.flush();
    for (const m of waiting) this.snapshot(m, log);
  }

  /**
   * The feed's log is about to be replaced (another principal, a refusal): its tabs stop showing
   * the old items at once, and get the new ones from {@link release}.
   */
  clear(feed: Feed): void {
    this.outbox.delete(feed);
    this.quiet.delete(feed);
    for (const m of feed.members) {
      if (m.ready) {
        this.send(m.tab, { type: "snapshot", sub: m.subId, items: [], caughtUp: false, replace: true });
        m.snapshots++;
      }
      m.ready = false;
    }
  }

  /** Sends the member the feed's snapshot of `log` (a live feed's is empty). */
  private snapshot(m: Member, log: FeedLog): void {
    const feed = m.feed;
    m.ready = true;
    // A live feed has no history: a tab that joins it gets only what comes next.
    const items = feed.request.mode === "hub" ? log.items.slice() : [];
    this.send(m.tab, { type: "snapshot", sub: m.subId, items, caughtUp: feed.state.kind === "caught_up", replace: m.snapshots++ > 0 });
    if (feed.request.mode === "hub") this.send(m.tab, { type: "read", sub: m.subId, read: log.read.view() });
    const refusal = refusalOf(feed);
    if (refusal) this.send(m.tab, { type: "sub_error", sub: m.subId, error: refusal });
    this.sendStatus(m.tab);
  }

  /** Tells the feed's shown tabs its read state (after the items queued before it). */
  read(feed: Feed): void {
    const log = feed.log;
    if (!log) return;
    this.flush();
    const read = log.read.view();
    for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "read", sub: m.subId, read });
  }

  /** Tells the feed's shown tabs that it reached the live edge. */
  caughtUp(feed: Feed): void {
    for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "caught_up", sub: m.subId });
  }

  /** Tells the feed's shown tabs why the server refused or ended it. */
  refused(feed: Feed): void {
    const refusal = refusalOf(feed);
    if (!refusal) return;
    for (const m of feed.members) if (m.ready) this.send(m.tab, { type: "sub_error", sub: m.subId, error: refusal });
  }

  sendStatus(tab: Tab): void {
    const error = this.context.error();
    const message: TabMessage = {
      type: "status",
      status: this.context.status(tab),
      tabs: this.context.tabCount(),
      connectionId: this.context.connectionId(),
      ...(error ? { error } : {}),
    };
    const text = JSON.stringify(message);
    if (text === tab.lastStatus) return;
    tab.lastStatus = text;
    this.send(tab, message);
  }

  broadcastStatus(): void {
    for (const tab of this.context.tabs()) this.sendStatus(tab);
  }

  stop(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
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
