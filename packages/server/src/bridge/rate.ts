/** @internal A token bucket: `rate` per second sustained, bursts of `2 x rate`. Pure: time is passed in. */
export class TokenBucket {
  readonly #rate: number;
  #tokens: number;
  #refilled: number;

  constructor(rate: number, now: number) {
    this.#rate = rate;
    this.#tokens = rate * 2;
    this.#refilled = now;
  }

  /** Takes a token: 0 when one was there, else the milliseconds until one will be. */
  take(now: number): number {
    const rate = this.#rate;
    this.#tokens = Math.min(rate * 2, this.#tokens + ((now - this.#refilled) * rate) / 1000);
    this.#refilled = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) * 1000) / rate);
  }
}
