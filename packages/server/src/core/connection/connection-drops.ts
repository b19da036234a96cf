/**
 * @internal Who must hear that the connection dropped, and whether it is up now. A publish
 * attempt in flight on a dropped connection gets no answer, so the connection's publish requests
 * (publish/publish-request.ts) watch here, one watcher per connection, and fail every attempt in flight
 * at once. Nothing is registered per publish: a reaction chained on a long-lived "lost" promise
 * per publish (an earlier way) stayed reachable until the connection dropped, ~600 bytes per
 * publish. While the connection is down, new attempts are not handed to nats.js (its buffer is
 * discarded at the next dial, issue 25): they wait for {@link ConnectionDrops.back}.
 */
import { deferred } from "../deferred.js";

/** What a watcher is told: the connection dropped under its request (which may have arrived). */
export class ConnectionDropped extends Error {}

/** An attempt that was never sent: the connection stayed down. Nothing can have been stored. */
export class ConnectionDown extends Error {
  constructor(
    /** The server the connection was lost from (nats.js's `disconnect` status). */
    readonly server: string | undefined,
    /** How long it has been down, ms. */
    readonly downMs: number,
    /** Reconnect dials that failed meanwhile. */
    readonly failedDials: number,
  ) {
    super(
      `not connected to NATS: the connection to ${server ?? "the server"} was lost ${downMs} ms ago` +
        ` and is not back (${failedDials} reconnect attempt${failedDials === 1 ? "" : "s"} failed)`,
    );
  }
}

export class ConnectionDrops {
  #waiting = new Set<(reason: ConnectionDropped) => void>();
  #lost = deferred();
  #back = deferred();
  #down = false;
  #downSince = 0;
  #server: string | undefined;
  #dials = 0;

  /** Resolves when the connection next drops; a new promise after each drop (compare by identity). */
  get lost(): Promise<void> {
    return this.#lost.promise;
  }

  /** True from a drop until the reconnect. */
  get down(): boolean {
    return this.#down;
  }

  /** Resolves when the connection is up again (at once when it is up). */
  get back(): Promise<void> {
    return this.#down ? this.#back.promise : Promise.resolve();
  }

  /** Why an attempt made now cannot be sent (while {@link down}). */
  notConnected(): ConnectionDown {
    // The first dial after a drop is the one in progress, not a failed one.
    return new ConnectionDown(this.#server, Date.now() - this.#downSince, Math.max(0, this.#dials - 1));
  }

  /** Calls `onDrop` once at the next drop, unless {@link forget} comes first. */
  watch(onDrop: (reason: ConnectionDropped) => void): void {
    this.#waiting.add(onDrop);
  }

  forget(onDrop: (reason: ConnectionDropped) => void): void {
    this.#waiting.delete(onDrop);
  }

  /** The connection is down (nats.js's `disconnect` from `server`): down until {@link reconnected}, and a drop. */
  disconnected(server: string | undefined): void {
    if (!this.#down) {
      this.#down = true;
      this.#downSince = Date.now();
      this.#dials = 0;
    }
    this.#server = server ?? this.#server;
    this.dropped();
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

  /** nats.js starts a reconnect dial (its `reconnecting` status). */
  dialing(): void {
    if (this.#down) this.#dials++;
  }

  /** The connection is up again. */
  reconnected(): void {
    if (!this.#down) return;
    this.#down = false;
    const back = this.#back;
    this.#back = deferred();
    back.resolve();
  }

  /** Attempts watching now (for tests). */
  get size(): number {
    return this.#waiting.size;
  }
}
