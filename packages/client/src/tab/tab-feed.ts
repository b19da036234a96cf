/**
 * One feed as a tab sees it: the items the engine sent (each once, in order, through a
 * `TabView`), the listeners of the app, and the error the server answered with.
 */
import { fromErrorPayload, type TidemarkError } from "@tidemark/shared";
import { TabView } from "../feed-log.js";
import { covers, type ReadView } from "../read-log.js";
import type { FeedItem, OpenRequest, ReadMark, TabMessage } from "../types.js";

/** What comes with a call of `onItems`. */
export interface ItemsInfo {
  /** The items are the feed's history (the first call, or the first to a new listener). */
  history: boolean;
  /**
   * The items replace everything shown before: the signed-in user changed, or the server
   * refused the feed (nothing saved of it is shown). Clear the list, then show these.
   */
  replaced: boolean;
}

/** One feed as this tab sees it. */
export interface Feed<T = unknown> {
  /** History and new items, oldest first, at most `historyLimit`. */
  readonly items: readonly FeedItem<T>[];
  /** Replay reached the live edge on the current connection. */
  readonly caughtUp: boolean;
  /**
   * Why the server refused or ended the feed, if it did; else why the connection failed
   * (`ORIGIN_REFUSED`, `UNAUTHORIZED`: the client's status is then `failed`), while it is.
   */
  readonly error: TidemarkError | undefined;
  /**
   * New items, each once and in order. The first call (and the first call to a listener added
   * later) carries the history with `history: true`.
   */
  onItems(listener: (items: FeedItem<T>[], info: ItemsInfo) => void): () => void;
  /** New events (not history, not gap markers), in exactly one tab of the profile (the focused one, else an elected one): sounds, desktop notifications. */
  onEffect(listener: (item: FeedItem<T>) => void): () => void;
  /** The feed's error as it is set (see `error`), once per error. */
  onError(listener: (error: TidemarkError) => void): () => void;
  /**
   * Unread events among `items`: above the user's read cursor and not marked read one by one.
   * The read state is the signed-in user's, kept on the server (protocol 1.4) and the same in
   * every tab and device of the user.
   */
  readonly unread: number;
  /** Called with `unread` whenever it changes (and at once with the current count). */
  onUnread(listener: (unread: number) => void): () => void;
  /** True when the user has read this event (an item of `items`; gap markers count as read). */
  isRead(item: FeedItem<T>): boolean;
  /**
   * Marks every event up to `upTo` read (an item of the feed or its event's cursor); by default
   * the newest event this tab shows — never the head, so an event that arrives meanwhile stays
   * unread. The read cursor never moves back. Works offline: the read is saved (IndexedDB) and
   * sent on reconnect; resolves once saved.
   */
  markRead(upTo?: FeedItem<T> | string): Promise<void>;
  /** Marks one event read (by its `eventId`), above the read cursor. Resolves once saved. */
  markItemRead(eventId: string): Promise<void>;
  close(): void;
}

/** @internal What a feed asks of the tab's client. */
export interface FeedOwner {
  reopen(feed: { request: OpenRequest }): void;
  closeFeed(feed: { request: OpenRequest }): void;
  markRead(feed: { request: OpenRequest }, mark: ReadMark): Promise<void>;
}

/** @internal */
export class TabFeed<T> implements Feed<T> {
  items: FeedItem<T>[] = [];
  caughtUp = false;
  /** The server's refusal of this feed. */
  #refusal: TidemarkError | undefined;
  /** The connection's final refusal, while the client is `failed`. */
  #connectionError: TidemarkError | undefined;
  view = new TabView<T>();
  private readonly itemListeners = new Set<(items: FeedItem<T>[], info: ItemsInfo) => void>();
  private readonly effectListeners = new Set<(item: FeedItem<T>) => void>();
  private readonly errorListeners = new Set<(error: TidemarkError) => void>();
  private readonly unreadListeners = new Set<(unread: number) => void>();
  private gotSnapshot = false;
  /** The read state the engine sent. */
  private read: ReadView = { items: [] };
  private readItems = new Set<string>();
  /** The count last told to `onUnread` listeners. */
  private told = -1;

  constructor(
    readonly request: OpenRequest,
    private readonly limit: number,
    private readonly owner: FeedOwner,
  ) {}

  get error(): TidemarkError | undefined {
    return this.#refusal ?? this.#connectionError;
  }

  /** @internal The connection failed with `error`, or recovered (undefined). */
  connectionFailed(error: TidemarkError | undefined): void {
    if (error === this.#connectionError) return;
    this.#connectionError = error;
    if (error && !this.#refusal) for (const l of this.errorListeners) l(error);
  }

  onItems(listener: (items: FeedItem<T>[], info: ItemsInfo) => void): () => void {
    this.itemListeners.add(listener);
    if (this.gotSnapshot) listener(this.items.slice(), { history: true, replaced: false });
    return () => this.itemListeners.delete(listener);
  }

  onEffect(listener: (item: FeedItem<T>) => void): () => void {
    this.effectListeners.add(listener);
    if (!this.request.effects) {
      this.request.effects = true;
      this.owner.reopen(this);
    }
    return () => this.effectListeners.delete(listener);
  }

  onError(listener: (error: TidemarkError) => void): () => void {
    this.errorListeners.add(listener);
    if (this.error) listener(this.error);
    return () => this.errorListeners.delete(listener);
  }

  get unread(): number {
    let n = 0;
    for (const item of this.items) if (!this.isRead(item)) n++;
    return n;
  }

  isRead(item: FeedItem<T>): boolean {
    if (item.kind !== "event") return true;
    return this.readItems.has(item.event.eventId) || covers(this.read.cursor, item.event.cursor);
  }

  onUnread(listener: (unread: number) => void): () => void {
    this.unreadListeners.add(listener);
    listener(this.unread);
    return () => this.unreadListeners.delete(listener);
  }

  markRead(upTo?: FeedItem<T> | string): Promise<void> {
    let cursor: string | undefined;
    if (typeof upTo === "string") cursor = upTo;
    else if (upTo !== undefined) cursor = upTo.kind === "event" ? upTo.event.cursor : undefined;
    else {
      for (let i = this.items.length - 1; i >= 0 && cursor === undefined; i--) {
        const item = this.items[i]!;
        if (item.kind === "event") cursor = item.event.cursor;
      }
    }
    if (cursor === undefined) return Promise.resolve();
    return this.owner.markRead(this, { cursor });
  }

  markItemRead(eventId: string): Promise<void> {
    const item = this.items.find((i) => i.kind === "event" && i.event.eventId === eventId);
    if (!item || item.kind !== "event") return Promise.resolve();
    return this.owner.markRead(this, { item: item.event.cursor, eventId });
  }

  #tellUnread(): void {
    if (this.unreadListeners.size === 0) return;
    const n = this.unread;
    if (n === this.told) return;
    this.told = n;
    for (const l of this.unreadListeners) l(n);
  }

  close(): void {
    this.owner.closeFeed(this);
  }

  /** @internal */
  receive(message: TabMessage): void {
    switch (message.type) {
      case "snapshot": {
        const history = !this.gotSnapshot || message.replace;
        this.gotSnapshot = true;
        this.caughtUp = message.caughtUp;
        if (message.replace) {
          this.view = new TabView<T>();
          this.items = [];
          this.#refusal = undefined;
        }
        this.add(this.view.accept(message.items), history, false, message.replace);
        return;
      }
      case "items":
        this.add(this.view.accept(message.items), false, message.effects, false);
        return;
      case "caught_up":
        this.caughtUp = true;
        return;
      case "read":
        this.read = message.read;
        this.readItems = new Set(message.read.items);
        this.#tellUnread();
        return;
      case "sub_error": {
        const error = fromErrorPayload(message.error);
        this.#refusal = error;
        for (const l of this.errorListeners) l(error);
        return;
      }
      default:
        return;
    }
  }

  private add(fresh: FeedItem<T>[], history: boolean, effects: boolean, replaced: boolean): void {
    if (fresh.length === 0 && !history) return;
    this.items.push(...fresh);
    if (this.items.length > this.limit) this.items.splice(0, this.items.length - this.limit);
    for (const l of this.itemListeners) l(fresh, { history, replaced });
    this.#tellUnread();
    if (effects) for (const item of fresh) if (item.kind === "event") for (const l of this.effectListeners) l(item);
  }
}
