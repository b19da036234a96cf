/**
 * How a tab learns at once that the SharedWorker behind it is gone. The worker holds a Web Lock
 * of its own for its whole life; each tab waits for that lock. Browsers release a dead agent's
 * locks, so the wait ends the moment the worker is killed (Chrome on Android does so under memory
 * pressure) or crashes: the tab is told within milliseconds, where three missed 5 s heartbeats
 * took about 16 s. Without Web Locks (an insecure origin, an old browser) there is no lifeline and
 * the heartbeat is the only sign.
 */

/** The part of `navigator.locks` used here. */
export interface Locks {
  request(name: string, callback: () => Promise<unknown> | unknown): Promise<unknown>;
  request(name: string, options: { signal: AbortSignal }, callback: () => Promise<unknown> | unknown): Promise<unknown>;
}

/** The browser's Web Locks, where there are any (a worker's `navigator` too). */
export function browserLocks(): Locks | undefined {
  return (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks;
}

/**
 * Worker side: takes a lock held until the worker ends, and resolves with its name once it is
 * held (so that no tab can be granted it before), or with undefined without Web Locks.
 */
export function holdLifeline(locks: Locks | undefined = browserLocks()): Promise<string | undefined> {
  if (!locks) return Promise.resolve(undefined);
  const name = `tidemark:worker:${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
  return new Promise((resolve) => {
    locks
      .request(name, () => {
        resolve(name);
        return new Promise<never>(() => undefined);
      })
      .catch(() => resolve(undefined));
  });
}

/**
 * Tab side: calls `onLost` once the lock `name` is granted, that is once its holder is gone.
 * Returns a function that stops waiting (the tab attached elsewhere, or closed).
 */
export function watchLifeline(name: string, onLost: () => void, locks: Locks | undefined = browserLocks()): () => void {
  if (!locks) return () => undefined;
  const stop = new AbortController();
  locks
    .request(name, { signal: stop.signal }, () => {
      if (!stop.signal.aborted) onLost();
    })
    // Aborted: the tab stopped waiting.
    .catch(() => undefined);
  return () => stop.abort();
}
