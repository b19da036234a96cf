/**
 * Where the engine keeps each feed's cursor and recent history: a small hand-written IndexedDB
 * wrapper (one object store, one record per feed), or memory where IndexedDB is missing.
 */
import type { SavedFeed } from "./feed-log.js";

/** @internal */
export interface FeedStore {
  load(key: string): Promise<SavedFeed | undefined>;
  save(feed: SavedFeed): Promise<void>;
}

const STORE = "feeds";

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB request failed"));
  });
}

/** @internal Opens the store; falls back to memory when IndexedDB is unavailable or fails. */
export function openStore(database: string): FeedStore {
  const memory = new Map<string, SavedFeed>();
  const fallback: FeedStore = {
    load: async (key) => memory.get(key),
    save: async (feed) => void memory.set(feed.key, feed),
  };
  if (database === "" || typeof indexedDB === "undefined") return fallback;

  const db: Promise<IDBDatabase | undefined> = new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(database, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE, { keyPath: "key" });
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error ?? new Error("IndexedDB open failed"));
    // Another context holds an older version open; history then lives in memory this time.
    open.onblocked = () => reject(new Error("IndexedDB open blocked"));
  }).catch(() => undefined);

  return {
    async load(key) {
      const handle = await db;
      if (!handle) return fallback.load(key);
      try {
        return (await request(handle.transaction(STORE, "readonly").objectStore(STORE).get(key))) as SavedFeed | undefined;
      } catch {
        return fallback.load(key);
      }
    },
    async save(feed) {
      const handle = await db;
      if (!handle) return fallback.save(feed);
      await new Promise<void>((resolve, reject) => {
        const tx = handle.transaction(STORE, "readwrite");
        tx.objectStore(STORE).put(feed);
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error ?? new Error("IndexedDB write failed"));
        tx.onabort = () => reject(tx.error ?? new Error("IndexedDB write aborted"));
      });
    },
  };
}
