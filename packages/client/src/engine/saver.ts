/**
 * Writes feed logs to the store, a few times per burst rather than once per event: each save
 * writes a feed's whole record. What a crash loses here is fetched again from the cursor saved
 * before it, and dropped as duplicates.
 */
import type { FeedLog } from "../feed-log.js";
import type { FeedStore } from "./store.js";

/** @internal */
export class Saver {
  private readonly dirty = new Set<FeedLog>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<FeedStore, "save">,
    private readonly delayMs = 100,
  ) {}

  /** The log changed: save it soon. A log without a key (its principal is unknown) is never saved. */
  mark(log: FeedLog): void {
    if (log.key === "") return;
    this.dirty.add(log);
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  /** Writes everything pending now; resolves when every write so far is done. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const records = [...this.dirty].map((log) => log.save());
    this.dirty.clear();
    if (records.length > 0) {
      // History is a cache of what the server retains: a failed write costs a replay, not data.
      this.chain = this.chain.then(() => Promise.all(records.map((r) => this.store.save(r).catch(() => undefined)))).then(() => undefined);
    }
    return this.chain;
  }
}
