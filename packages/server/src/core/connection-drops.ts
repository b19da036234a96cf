/**
 * @internal Who must hear that the connection dropped. A publish attempt in flight on a dropped
 * connection gets no answer, so the connection's publish requests (publish-request.ts) watch
 * here, one watcher per connection, and fail every attempt in flight at once. Nothing is
 * registered per publish: a reaction chained on a long-lived "lost" promise per publish (an
 * earlier way) stayed reachable until the connection dropped, ~600 bytes per publish.
 */
import { deferred } from "./deferred.js";

/** What a watcher is told: the connection dropped under its request (which may have arrived). */
export class ConnectionDropped extends Error {}

export class ConnectionDrops {
  #waiting = new Set<(reason: ConnectionDropped) => void>();
  #lost = deferred();

  /** Resolves when the connection next drops; a new promise after each drop (compare by identity). */
  get lost(): Promise<void> {
    return this.#lost.promise;
  }

  /** Calls `onDrop` once at the next drop, unless {@link forget} comes first. */
  watch(onDrop: (reason: ConnectionDropped) => void): void {
    this.#waiting.add(onDrop);
  }

  forget(onDrop: (reason: ConnectionDropped) => void): void {
    this.#waiting.delete(onDrop);
  }

  /** The connection dropped: tell everyone waiting, then start over. */
  dropped(): void {
    const waiting = this.#waiting;
    this.#waiting = new Set();
    const lost = this.#lost;
    this.#lost = deferred();
    lost.resolve();
    if (waiting.size === 0) return;
    const reason = new ConnectionDropped("the connection dropped");
    for (const onDrop of waiting) onDrop(reason);
  }

  /** Attempts watching now (for tests). */
  get size(): number {
    return this.#waiting.size;
  }
}
