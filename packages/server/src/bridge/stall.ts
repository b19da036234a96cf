/**
 * @internal The clock of the deadlines a bridge holds its clients to (the hello and refresh
 * deadlines, the shorter hello deadline under pressure, heartbeat silence): wall time minus the
 * time the bridge's own event loop was seen stalled. While the loop does not turn (a long turn,
 * a GC pause, a process starved of CPU on a loaded machine) the bridge sends no ping and reads
 * no frame, so that silence is the bridge's, not the client's: a socket whose hello or pong sits
 * unread in the kernel must not be closed when the loop comes back (issue 27: after kill -9 of
 * every bridge, the restarted ones, starved by the resume storm, closed thousands of healthy
 * sockets with 4408 and their reconnects fed the storm).
 *
 * The ticker (ticker.ts) observes the clock at every tick; a tick later than its interval by
 * more than {@link STALL_TOLERANCE_MS} counts the lateness as stalled. Token expiry is a wall
 * time (the principal's) and is not moved: see {@link wallOf}.
 */

/** Lateness of a tick that counts as a stall, in ms: smaller delays are ordinary timer jitter. */
export const STALL_TOLERANCE_MS = 100;

export class StallClock {
  /** Time the loop was seen stalled since the bridge started, in ms. */
  stalledMs = 0;
  /** Stalls seen (ticks later than the tolerance). */
  stalls = 0;
  /** The longest stall seen, in ms. */
  longestMs = 0;
  /** The last tick, or the clock's creation (the ticker starts with the bridge). */
  #lastTick: number;
  readonly #wall: () => number;

  constructor(wall: () => number = Date.now) {
    this.#wall = wall;
    this.#lastTick = wall();
  }

  /** Now on this clock (ms; wall time minus the stalls so far). */
  now(): number {
    return this.#wall() - this.stalledMs;
  }

  /** The wall time of `now` of this clock (for deadlines set in wall time, such as token expiry). */
  wallOf(now: number): number {
    return now + this.stalledMs;
  }

  /**
   * A tick of a timer due every `intervalMs`: a later one means the loop did not turn for that
   * long (beyond the tolerance), which is counted as stalled. Returns `now()`.
   */
  tick(intervalMs: number): number {
    const wall = this.#wall();
    const late = wall - this.#lastTick - intervalMs;
    if (late > STALL_TOLERANCE_MS) {
      this.stalledMs += late;
      this.stalls++;
      if (late > this.longestMs) this.longestMs = late;
    }
    this.#lastTick = wall;
    return wall - this.stalledMs;
  }
}
