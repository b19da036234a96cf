/**
 * Where the engine keeps each feed's cursor and recent history: a small hand-written IndexedDB
 * wrapper (one object store, one record per principal and feed), or memory where IndexedDB is
 * missing. Records are keyed by the principal the server named (see `historyKey` in feed-log.ts), so the
 * next user of a shared browser profile never reads the previous one's.
 */
import type { SavedFeed } from "../feed-log.js";

/** The last principal the server confirmed on this profile, and the app's hint at the time. */
export interface LastPrincipal {
  principal: string;
  hint: string | null;
}

/** @internal */
export interface FeedStore {
  load(key: string): Promise<SavedFeed | undefined>;
  save(feed: SavedFeed): Promise<void>;
  loadLast(): Promise<LastPrincipal | undefined>;
  saveLast(last: LastPrincipal): Promise<void>;
}

const STORE = "feeds";
/**
 * Version 2 keys records by principal. Version 1 records carry no principal (they may be
 * another user's): the upgrade drops them.
 */
const VERSION = 2;
/** Key of the {@link LastPrincipal} record; no feed key starts with a NUL. */
const LAST = "\u0000last-principal";

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB request failed"));
  });
}

function isLast(value: unknown): value is LastPrincipal {
  const v = value as LastPrincipal | undefined;
  return typeof v === "object" && v !== null && typeof v.principal === "string" && (v.hint === null || typeof v.hint === "string");
}

/** @internal Opens the store; falls back to memory when IndexedDB is unavailable or fails. */
export function openStore(database: string): FeedStore {
  const memory = new Map<string, unknown>();
  const get = async (key: string) => memory.get(key);
  const put = async (record: { key: string }) => void memory.set(record.key, record);
  if (database !== "" && typeof indexedDB !== "undefined") {
    const db = openDatabase(database);
    const handle = async () => db;
    return storeOn(
      async (key) => {
        const h = await handle();
        if (!h) return get(key);
        try {
          return await request(h.transaction(STORE, "readonly").objectStore(STORE).get(key));
        } catch {
          return get(key);
        }
      },
      async (record) => {
        const h = await handle();
        if (!h) return put(record);
        await new Promise<void>((resolve, reject) => {
          const tx = h.transaction(STORE, "readwrite");
          tx.objectStore(STORE).put(record);
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error ?? new Error("IndexedDB write failed"));
          tx.onabort = () => reject(tx.error ?? new Error("IndexedDB write aborted"));
        });
      },
    );
  }
  return storeOn(get, put);
}

function storeOn(get: (key: string) => Promise<unknown>, put: (record: { key: string }) => Promise<void>): FeedStore {
  return {
    load: async (key) => (await get(key)) as SavedFeed | undefined,
    save: (feed) => put(feed),
    loadLast: async () => {
      const value = await get(LAST).catch(() => undefined);
      return isLast(value) ? value : undefined;
    },
    saveLast: (last) => put({ key: LAST, ...last }),
  };
}

function openDatabase(database: string): Promise<IDBDatabase | undefined> {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(database, VERSION);
    open.onupgradeneeded = () => {
      const db = open.result;
      if (db.objectStoreNames.contains(STORE)) db.deleteObjectStore(STORE);
      db.createObjectStore(STORE, { keyPath: "key" });
    };
    open.onsuccess = () => {
      const db = open.result;
      // A newer build in another tab upgrades the database: let it, history lives in memory here.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    open.onerror = () => reject(open.error ?? new Error("IndexedDB open failed"));
    // Another context holds an older version open; history then lives in memory this time.
    open.onblocked = () => reject(new Error("IndexedDB open blocked"));
  }).catch(() => undefined);
}
