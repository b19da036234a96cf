/**
 * Whose saved history the engine holds, and reading and writing it. History belongs to the
 * principal the server names (`welcome.principal`): records are keyed by it (`historyKey`), so
 * one user of a shared browser profile never reads another's. Before the server answers, the
 * last principal it confirmed on this profile is assumed, if the app names the same user
 * (`ClientOptions.principal`) — or names none, then and now.
 */
import { FeedLog, historyKey, isSavedFeed } from "../feed-log.js";
import { Saver } from "./saver.js";
import { openStore, type FeedStore } from "./store.js";
import type { Feed } from "./model.js";

const SAVE_DELAY_MS = 100;

/** @internal */
export class History {
  readonly #store: FeedStore;
  readonly #saver: Saver;
  /** Undefined: unknown, nothing is read or written. */
  #current: string | undefined;
  /** Bumped when the principal changes: reads started before are dropped. */
  #generation = 0;
  /** Reading the last confirmed principal at start. */
  readonly #identity: Promise<void>;

  constructor(
    database: string,
    /** Who the app says is signed in. */
    public hint: string | null,
  ) {
    this.#store = openStore(database);
    this.#saver = new Saver(this.#store, SAVE_DELAY_MS);
    this.#identity = this.#store
      .loadLast()
      .then((last) => {
        if (last && last.hint === this.hint && this.#current === undefined) this.#current = last.principal;
      })
      // No IndexedDB (private mode, blocked upgrade): nobody is remembered, history stays in memory.
      .catch(() => undefined);
  }

  /** Resolves once the assumed principal is known. */
  get ready(): Promise<void> {
    return this.#identity;
  }

  get principal(): string | undefined {
    return this.#current;
  }

  /** The principal is now `principal` (undefined: unknown); false when it already was. */
  adopt(principal: string | undefined): boolean {
    if (principal === this.#current) return false;
    this.#current = principal;
    this.#generation++;
    // Best effort: the saved principal only spares the next start a wait for the server's welcome.
    if (principal !== undefined) void this.#store.saveLast({ principal, hint: this.hint }).catch(() => undefined);
    return true;
  }

  /**
   * The feed's saved history for the current principal, as a log of `limit` items; undefined
   * when the principal changed meanwhile (a newer read is under way). A live feed, or one of an
   * unknown principal, gets an empty log without a key: it is never written.
   */
  async read(feed: Feed, limit: number): Promise<FeedLog | undefined> {
    const generation = this.#generation;
    await this.#identity;
    const principal = this.#current;
    const key = feed.request.mode === "hub" && principal !== undefined ? historyKey(principal, feed.key) : "";
    let saved: unknown;
    if (key !== "") {
      // A feed closed a moment ago may still have unwritten items: write them first.
      await this.#saver.flush();
      // An unreadable record is a cold start for this feed: the server replays from the beginning.
      saved = await this.#store.load(key).catch(() => undefined);
    }
    if (generation !== this.#generation || principal !== this.#current) return undefined;
    // A record this version cannot read (older schema, corrupted) is ignored, not fatal.
    return new FeedLog(isSavedFeed(saved) && saved.key === key ? saved : { key, lastN: 0, items: [] }, limit);
  }

  /** The log changed: write it soon. */
  mark(log: FeedLog): void {
    this.#saver.mark(log);
  }

  /** Writes pending history now. */
  flush(): Promise<void> {
    return this.#saver.flush();
  }
}
