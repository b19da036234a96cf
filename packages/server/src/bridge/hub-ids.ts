/** @internal Server-assigned hub ids, one per (mode, topic, tenant) in use on this process. */
export class HubIds {
  readonly #ids = new Map<string, { id: string; refs: number }>();
  #next = 0;

  get size(): number {
    return this.#ids.size;
  }

  acquire(key: string): string {
    let entry = this.#ids.get(key);
    if (!entry) this.#ids.set(key, (entry = { id: `h${(this.#next++).toString(36)}`, refs: 0 }));
    entry.refs++;
    return entry.id;
  }

  release(key: string): void {
    const entry = this.#ids.get(key);
    if (entry && --entry.refs <= 0) this.#ids.delete(key);
  }
}
