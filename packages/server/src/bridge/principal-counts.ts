/** @internal Per-principal connection counts of one bridge process (the per-principal limit). */
export class PrincipalCounts {
  readonly #counts = new Map<string, number>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a slot for `key`; false (nothing taken) when the principal is at the limit. */
  acquire(key: string): boolean {
    const n = this.#counts.get(key) ?? 0;
    if (n >= this.#max) return false;
    this.#counts.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = (this.#counts.get(key) ?? 1) - 1;
    if (n <= 0) this.#counts.delete(key);
    else this.#counts.set(key, n);
  }
}

