/**
 * @internal Per-principal connection counts of one bridge process (the per-principal limit),
 * and each counted principal's id (principal-id.ts): hashed once per principal, not at every
 * connection's `hello`, and one string shared by its connections.
 */
import { principalId } from "../core/principal-id.js";

interface Entry {
  n: number;
  id: string | undefined;
}

export class PrincipalCounts {
  readonly #counts = new Map<string, Entry>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a slot for `key`; false (nothing taken) when the principal is at the limit. */
  acquire(key: string): boolean {
    const entry = this.#counts.get(key);
    if (!entry) {
      if (this.#max < 1) return false;
      this.#counts.set(key, { n: 1, id: undefined });
      return true;
    }
    if (entry.n >= this.#max) return false;
    entry.n++;
    return true;
  }

  release(key: string): void {
    const entry = this.#counts.get(key);
    if (entry && --entry.n <= 0) this.#counts.delete(key);
  }

  /** The principal id of `key` (hold a slot of it while asking). */
  async idOf(key: string): Promise<string> {
    const known = this.#counts.get(key)?.id;
    if (known !== undefined) return known;
    const id = await principalId(key);
    const entry = this.#counts.get(key);
    if (!entry) return id;
    return (entry.id ??= id);
  }
}
