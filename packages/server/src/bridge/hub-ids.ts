/** @internal A hub id and its key, shared by every subscription of the hub. */
export interface HubEntry {
  readonly id: string;
  /** The one copy of the key the subscriptions keep (not a string per subscription). */
  readonly key: string;
}

/** @internal Server-assigned hub ids, one per (mode, topic, tenant) in use on this process. */
export class HubIds {
  readonly #ids = new Map<string, HubEntry & { refs: number }>();
  #next = 0;

  get size(): number {
    return this.#ids.size;
  }

  acquire(key: string): HubEntry {
    let entry = this.#ids.get(key);
    if (!entry) this.#ids.set(key, (entry = { id: `h${(this.#next++).toString(36)}`, key, refs: 0 }));
    entry.refs++;
    return entry;
  }

  release(key: string): void {
    const entry = this.#ids.get(key);
    if (entry && --entry.refs <= 0) this.#ids.delete(key);
  }
}
