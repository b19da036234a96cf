/**
 * One feed as an external store for `useSyncExternalStore`: an immutable snapshot that changes
 * only when the feed does. The client's feed opens with the first subscriber and closes a tick
 * after the last one leaves, so StrictMode's double effects open one subscription, not two.
 */
import type { Client, Feed, FeedItem, FeedSpec, Status } from "@tidemark/client";
import type { ClientHandle } from "./client-handle.js";

/** `hub`: history and resume (`client.feed`); `live`: new events only (`client.live`). */
export type FeedMode = "hub" | "live";

/**
 * Where a feed is:
 * - `loading`: no history yet (also on the server and in the first client render);
 * - `connecting`, `live`, `resuming`, `offline`: history shown, and this tab's connection status;
 * - `error`: the server refused or ended the feed, or the connection failed (the client's
 *   `failed` status: `ORIGIN_REFUSED`, `UNAUTHORIZED`); `error` says why.
 */
export type FeedStatus = "loading" | Status | "error";

/** What `useFeed` and `useLiveFeed` return. The same object until something changes. */
export interface FeedState<T = unknown> {
  /** History, then new items, oldest first, each once (at most the client's `historyLimit`). */
  readonly items: readonly FeedItem<T>[];
  readonly status: FeedStatus;
  /** Why the server refused or ended the feed, or why the connection failed (a `TidemarkError` with its `code`). */
  readonly error: Feed<T>["error"];
  /** Unread events among `items` (the signed-in user's read state, the same in every tab and device). */
  readonly unread: number;
  /**
   * Marks every event up to `upTo` read; by default the newest event this tab shows (never the
   * head: an event that arrives meanwhile stays unread). Stable across renders.
   */
  readonly markRead: (upTo?: FeedItem<unknown> | string) => Promise<void>;
  /** Marks one event read by its `eventId`. Stable across renders. */
  readonly markItemRead: (eventId: string) => Promise<void>;
  /** True when the user has read this item. Stable across renders. */
  readonly isRead: (item: FeedItem<unknown>) => boolean;
}

const idle = () => Promise.resolve();

/** The snapshot of a feed nobody opened yet, and of every feed in a server render. */
export const EMPTY_FEED: FeedState<never> = Object.freeze({
  items: Object.freeze([]) as readonly never[],
  status: "loading",
  error: undefined,
  unread: 0,
  markRead: idle,
  markItemRead: idle,
  isRead: () => false,
});

/** @internal */
export class FeedStore<T> {
  private state: FeedState<T> = EMPTY_FEED;
  private readonly listeners = new Set<() => void>();
  private open: { client: Client; feed: Feed<T>; offs: (() => void)[]; history: boolean } | undefined;
  private closeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly source: ClientHandle,
    readonly mode: FeedMode,
    readonly topic: string,
    readonly tenantId: string | undefined,
    /** The first page of a feed with no saved state (the first component's `initial`). */
    readonly initial?: FeedSpec["initial"],
  ) {}

  readonly markRead = (upTo?: FeedItem<unknown> | string): Promise<void> => this.open?.feed.markRead(upTo as FeedItem<T> | string | undefined) ?? Promise.resolve();
  readonly markItemRead = (eventId: string): Promise<void> => this.open?.feed.markItemRead(eventId) ?? Promise.resolve();
  readonly isRead = (item: FeedItem<unknown>): boolean => this.open?.feed.isRead(item as FeedItem<T>) ?? false;

  readonly getSnapshot = (): FeedState<T> => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    clearTimeout(this.closeTimer);
    if (!this.open) this.start();
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      clearTimeout(this.closeTimer);
      this.closeTimer = setTimeout(() => {
        if (this.listeners.size === 0) this.stop();
      }, 0);
    };
  };

  private start(): void {
    const client = this.source.acquire();
    const spec: FeedSpec = this.tenantId === undefined ? { topic: this.topic } : { topic: this.topic, tenantId: this.tenantId };
    if (this.mode === "hub" && this.initial !== undefined) spec.initial = this.initial;
    const feed = this.mode === "hub" ? client.feed<T>(spec) : client.live<T>(spec);
    const open = { client, feed, offs: [] as (() => void)[], history: false };
    this.open = open;
    open.offs.push(
      feed.onItems((_items, { history }) => {
        if (history) open.history = true;
        this.update(true);
      }),
      feed.onError(() => this.update(false)),
      feed.onUnread(() => this.update(false)),
      client.onState(() => this.update(false)),
    );
  }

  private stop(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    for (const off of open.offs) off();
    open.feed.close();
    this.state = EMPTY_FEED;
    this.source.release();
  }

  /** Makes a new snapshot if anything a component shows changed, and tells the subscribers. */
  private update(itemsChanged: boolean): void {
    const open = this.open;
    if (!open) return;
    const { feed, client } = open;
    const status: FeedStatus = feed.error ? "error" : open.history ? client.state.status : "loading";
    const items = itemsChanged ? feed.items.slice() : this.state.items;
    const unread = this.mode === "hub" ? feed.unread : 0;
    if (!itemsChanged && status === this.state.status && feed.error === this.state.error && unread === this.state.unread) return;
    this.state = Object.freeze({ items, status, error: feed.error, unread, markRead: this.markRead, markItemRead: this.markItemRead, isRead: this.isRead });
    for (const listener of [...this.listeners]) listener();
  }
}
