/**
 * @internal Sockets that have not said a valid `hello` yet, per process and per remote address.
 * They cost a socket and its buffers before anyone vouched for them, so they are capped: over
 * either cap the upgrade is refused (503), or a socket that raced past the check is closed 1013.
 */
export class UnauthenticatedCount {
  #total = 0;
  readonly #byAddress = new Map<string, number>();
  readonly #max: number;
  readonly #maxPerAddress: number;

  constructor(limits: { maxUnauthenticated: number; maxUnauthenticatedPerAddress: number }) {
    this.#max = limits.maxUnauthenticated;
    this.#maxPerAddress = limits.maxUnauthenticatedPerAddress;
  }

  get size(): number {
    return this.#total;
  }

  /** Whether one more socket from `address` (undefined: unknown) would be admitted. */
  admits(address: string | undefined): boolean {
    if (this.#total >= this.#max) return false;
    return address === undefined || (this.#byAddress.get(address) ?? 0) < this.#maxPerAddress;
  }

  /** Counts a socket in; false (not counted) when over a cap. */
  add(address: string | undefined): boolean {
    if (!this.admits(address)) return false;
    this.#total++;
    if (address !== undefined) this.#byAddress.set(address, (this.#byAddress.get(address) ?? 0) + 1);
    return true;
  }

  remove(address: string | undefined): void {
    this.#total--;
    if (address === undefined) return;
    const n = (this.#byAddress.get(address) ?? 1) - 1;
    if (n <= 0) this.#byAddress.delete(address);
    else this.#byAddress.set(address, n);
  }
}

/**
 * The remote address of an upgrade, from what the runtime adapter put in Hono's env: the
 * `IncomingMessage` on Node (`@hono/node-server` and `serveBridge`). IPv4-mapped IPv6 addresses
 * are folded to IPv4 so one client is one key.
 */
export function remoteAddressOf(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  const address = incoming?.socket?.remoteAddress;
  if (typeof address !== "string") return undefined;
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
