/**
 * A stand-in for `@tidemark/client` that counts what the hooks ask of it and lets a test push
 * history, items, errors and states. The e2e suite runs the same hooks on the real client.
 */
import type { Client, ClientState, EngineStats, Feed, FeedItem, FeedSpec, ItemsInfo } from "@tidemark/client";

export class FakeFeed implements Feed<unknown> {
  items: FeedItem<unknown>[] = [];
  caughtUp = false;
  error: Feed["error"];
  closed = false;
  /** Event ids read (the fake's whole read state). */
  readonly read = new Set<string>();
  readonly unreadListeners = new Set<(n: number) => void>();
  readonly itemListeners = new Set<(items: FeedItem<unknown>[], info: ItemsInfo) => void>();
  readonly errorListeners = new Set<(e: NonNullable<Feed["error"]>) => void>();

  constructor(readonly spec: FeedSpec, readonly mode: "hub" | "live") {}

  onItems(l: (items: FeedItem<unknown>[], info: ItemsInfo) => void): () => void {
    this.itemListeners.add(l);
    return () => this.itemListeners.delete(l);
  }
  onEffect(): () => void {
    return () => undefined;
  }
  onError(l: (e: NonNullable<Feed["error"]>) => void): () => void {
    this.errorListeners.add(l);
    return () => this.errorListeners.delete(l);
  }
  get unread(): number {
    return this.items.filter((i) => !this.isRead(i)).length;
  }
  isRead(item: FeedItem<unknown>): boolean {
    return item.kind !== "event" || this.read.has(item.event.eventId);
  }
  onUnread(l: (n: number) => void): () => void {
    this.unreadListeners.add(l);
    l(this.unread);
    return () => this.unreadListeners.delete(l);
  }
  markRead(): Promise<void> {
    for (const i of this.items) if (i.kind === "event") this.read.add(i.event.eventId);
    for (const l of this.unreadListeners) l(this.unread);
    return Promise.resolve();
  }
  markItemRead(eventId: string): Promise<void> {
    this.read.add(eventId);
    for (const l of this.unreadListeners) l(this.unread);
    return Promise.resolve();
  }
  close(): void {
    this.closed = true;
  }
  push(items: FeedItem<unknown>[], history: boolean): void {
    this.items = [...this.items, ...items];
    for (const l of this.itemListeners) l(items, { history, replaced: false });
    for (const l of this.unreadListeners) l(this.unread);
  }
  /** What the client does when the signed-in user changes: everything shown before goes. */
  replace(items: FeedItem<unknown>[]): void {
    this.items = items.slice();
    for (const l of this.itemListeners) l(items, { history: true, replaced: true });
  }
  fail(error: NonNullable<Feed["error"]>): void {
    this.error = error;
    for (const l of this.errorListeners) l(error);
  }
}

export class FakeClient implements Client {
  state: ClientState = { status: "connecting", tabs: 1, transport: "shared-worker" };
  readonly feeds: FakeFeed[] = [];
  readonly stateListeners = new Set<(s: ClientState) => void>();
  closed = 0;
  calls = 0;

  onState(l: (s: ClientState) => void): () => void {
    this.calls++;
    this.stateListeners.add(l);
    l(this.state);
    return () => this.stateListeners.delete(l);
  }
  feed<T>(spec: FeedSpec): Feed<T> {
    return this.open(spec, "hub") as unknown as Feed<T>;
  }
  live<T>(spec: FeedSpec): Feed<T> {
    return this.open(spec, "live") as unknown as Feed<T>;
  }
  stats(): Promise<EngineStats> {
    return Promise.reject(new Error("fake"));
  }
  close(): void {
    this.closed++;
  }
  setState(state: Partial<ClientState>): void {
    this.state = { ...this.state, ...state };
    for (const l of this.stateListeners) l(this.state);
  }
  /** Feeds the hooks opened and did not close. */
  get openFeeds(): FakeFeed[] {
    return this.feeds.filter((f) => !f.closed);
  }
  private open(spec: FeedSpec, mode: "hub" | "live"): FakeFeed {
    this.calls++;
    const feed = new FakeFeed(spec, mode);
    this.feeds.push(feed);
    return feed;
  }
}

export const event = (n: number, text: string): FeedItem<unknown> => ({
  kind: "event",
  n,
  event: { eventId: `e${n}`, cursor: `c${n}`, streamSequence: n, tenantId: "acme", data: { text }, publishedAt: 0 } as never,
});

/** Past the deferred releases: a feed closes a tick after its last subscriber, the client a tick after that. */
export const tick = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 1));
};
