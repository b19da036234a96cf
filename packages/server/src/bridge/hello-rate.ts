/**
 * @internal How fast the bridge completes hellos, and when to tell a socket refused by the cap on
 * sockets waiting for `hello` to come back: after the queue ahead of it, at the pace hellos
 * complete, so that a crowd larger than the cap returns evenly instead of backing off blindly.
 */

/**
 * The earliest comeback a refusal names, in ms: never straight back. The schedule spaces the
 * comebacks; this only keeps an over-optimistic estimate from bouncing a crowd at once.
 */
export const COMEBACK_MIN_MS = 250;
/** The latest comeback a refusal names, in ms. */
export const COMEBACK_MAX_MS = 30_000;

/**
 * The completion rate of hellos with every place of the cap busy, by Little's law: `places`
 * divided by the time a hello holds its place (open to answered), an exponentially weighted
 * moving average over the hellos answered. A count of hellos per second would measure the
 * demand, not the capacity: an idle bridge would read zero and send the first crowd after it
 * away for the longest time. The time a hello takes is known after the first one and stays
 * true while the bridge idles.
 *
 * @example
 * const rate = new HelloRate(1000);
 * rate.completed(120);                  // a hello answered 120 ms after its socket opened
 * rate.comebackMs(1000, Date.now());    // ~370 ms for the first refused, one slot more for each next
 */
export class HelloRate {
  readonly #places: number;
  readonly #weight: number;
  /** Moving average of the time a hello holds its place, in ms. */
  #helloMs: number;
  /** When the last comeback handed out is due (ms since the epoch): the next one goes after it. */
  #horizon = 0;

  /**
   * @param places the cap (`maxUnauthenticated`)
   * @param initialHelloMs the guess before any hello was answered: a round trip and an `authenticate`
   * @param weight of each new hello in the average
   */
  constructor(places: number, initialHelloMs = 250, weight = 0.1) {
    this.#places = places;
    this.#helloMs = initialHelloMs;
    this.#weight = weight;
  }

  /** A hello was answered (welcome or refusal) `heldMs` after its socket opened. */
  completed(heldMs: number): void {
    this.#helloMs += this.#weight * (Math.max(1, heldMs) - this.#helloMs);
  }

  /** The time a hello holds its place, in ms (moving average). */
  get helloMs(): number {
    return this.#helloMs;
  }

  /** Hellos completed per second with every place busy. */
  get perSecond(): number {
    return (this.#places * 1000) / this.#helloMs;
  }

  /**
   * When a refused socket should come back, in ms from `now`. The `waiting` sockets ahead of it
   * are done after `waiting` slots of `1 / perSecond`; each refusal then takes the next free slot
   * after the ones already handed out (a random point inside it), so refused sockets return at
   * the rate hellos complete, spread over the expected drain of the queue. At least
   * {@link COMEBACK_MIN_MS}; a schedule already {@link COMEBACK_MAX_MS} long cannot promise a
   * slot, so the rest are spread evenly over the whole window (some will be refused again, with
   * a newer estimate).
   */
  comebackMs(waiting: number, now: number, random: () => number = Math.random): number {
    const slot = this.#helloMs / this.#places;
    const at = Math.max(this.#horizon, now + COMEBACK_MIN_MS + waiting * slot);
    if (at - now > COMEBACK_MAX_MS) return Math.round(COMEBACK_MIN_MS + random() * (COMEBACK_MAX_MS - COMEBACK_MIN_MS));
    this.#horizon = at + slot;
    return Math.min(COMEBACK_MAX_MS, Math.round(at - now + random() * slot));
  }
}
