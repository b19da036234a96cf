/**
 * The one table of the current socket's subscriptions: which feed each wire id belongs to, and
 * which hub the server put it on (`event` frames name the hub, not the subscription). Every
 * change of that relation goes through here.
 */
import type { Feed } from "./model.js";

interface Row {
  id: string;
  feed: Feed;
  /** Set once the server answered `subscribed`. */
  hub: string | undefined;
}

/** @internal */
export class WireTable {
  private readonly byId = new Map<string, Row>();
  private readonly byFeed = new Map<Feed, Row>();
  private readonly byHub = new Map<string, Set<Row>>();
  /** Never reset: an id is never reused, so a late answer to an old one finds nothing. */
  private next = 0;

  /** A new subscription of `feed`: its wire id. The feed's previous row, if any, is dropped. */
  add(feed: Feed): string {
    this.remove(feed);
    const row: Row = { id: `s${++this.next}`, feed, hub: undefined };
    this.byId.set(row.id, row);
    this.byFeed.set(feed, row);
    return row.id;
  }

  /** The feed has a subscription on the socket (asked or accepted). */
  has(feed: Feed): boolean {
    return this.byFeed.has(feed);
  }

  feed(id: string): Feed | undefined {
    return this.byId.get(id)?.feed;
  }

  /** The server accepted `id` on `hub`: that hub's events go to its feed. */
  accept(id: string, hub: string): Feed | undefined {
    const row = this.byId.get(id);
    if (!row) return undefined;
    this.unhub(row);
    row.hub = hub;
    let rows = this.byHub.get(hub);
    if (!rows) this.byHub.set(hub, (rows = new Set()));
    rows.add(row);
    return row.feed;
  }

  /** The feeds that receive `hub`'s events. */
  onHub(hub: string): Feed[] {
    return [...(this.byHub.get(hub) ?? [])].map((row) => row.feed);
  }

  /** Forgets the feed's subscription; returns its wire id (to unsubscribe), if it had one. */
  remove(feed: Feed): string | undefined {
    const row = this.byFeed.get(feed);
    if (!row) return undefined;
    this.drop(row);
    return row.id;
  }

  /** Forgets subscription `id` (the server ended it); returns its feed. */
  removeId(id: string): Feed | undefined {
    const row = this.byId.get(id);
    if (!row) return undefined;
    this.drop(row);
    return row.feed;
  }

  /** The socket is gone, and every subscription with it. */
  clear(): void {
    this.byId.clear();
    this.byFeed.clear();
    this.byHub.clear();
  }

  private drop(row: Row): void {
    this.byId.delete(row.id);
    this.byFeed.delete(row.feed);
    this.unhub(row);
  }

  private unhub(row: Row): void {
    if (row.hub === undefined) return;
    const rows = this.byHub.get(row.hub);
    rows?.delete(row);
    if (rows?.size === 0) this.byHub.delete(row.hub);
  }
}
