/**
 * The one table of the current socket's subscriptions: which feed each wire id belongs to, and
 * which hub the server put it on (`event` frames name the hub, not the subscription). Every
 * change of that relation goes through here. A profile has a few dozen feeds at most, so the
 * lookups by feed and by hub scan the rows.
 */
import type { Feed } from "./model.js";

interface Row {
  feed: Feed;
  /** Set once the server answered `subscribed`. */
  hub?: string;
}

/** @internal */
export class WireTable {
  readonly #rows = new Map<string, Row>();
  /** Never reset: an id is never reused, so a late answer to an old one finds nothing. */
  #next = 0;

  /** A new subscription of `feed`: its wire id. The feed's previous row, if any, is dropped. */
  add(feed: Feed): string {
    this.remove(feed);
    const id = `s${++this.#next}`;
    this.#rows.set(id, { feed });
    return id;
  }

  /** The feed has a subscription on the socket (asked or accepted). */
  has(feed: Feed): boolean {
    return this.#idOf(feed) !== undefined;
  }

  feed(id: string): Feed | undefined {
    return this.#rows.get(id)?.feed;
  }

  /** The server accepted `id` on `hub`: that hub's events go to its feed. */
  accept(id: string, hub: string): Feed | undefined {
    const row = this.#rows.get(id);
    if (row) row.hub = hub;
    return row?.feed;
  }

  /** The feed's wire id once the server accepted it (`subscribed`), else undefined. */
  acceptedId(feed: Feed): string | undefined {
    const id = this.#idOf(feed);
    return id !== undefined && this.#rows.get(id)!.hub !== undefined ? id : undefined;
  }

  /** The feeds that receive `hub`'s events. */
  onHub(hub: string): Feed[] {
    return [...this.#rows.values()].filter((row) => row.hub === hub).map((row) => row.feed);
  }

  /** Forgets the feed's subscription; returns its wire id (to unsubscribe), if it had one. */
  remove(feed: Feed): string | undefined {
    const id = this.#idOf(feed);
    if (id !== undefined) this.#rows.delete(id);
    return id;
  }

  /** Forgets subscription `id` (the server ended it); returns its feed. */
  removeId(id: string): Feed | undefined {
    const feed = this.feed(id);
    this.#rows.delete(id);
    return feed;
  }

  /** The socket is gone, and every subscription with it. */
  clear(): void {
    this.#rows.clear();
  }

  #idOf(feed: Feed): string | undefined {
    for (const [id, row] of this.#rows) if (row.feed === feed) return id;
    return undefined;
  }
}
