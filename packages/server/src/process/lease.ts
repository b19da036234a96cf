/**
 * Lease renewal of a worker's held deliveries. The consumer's ack wait is short (3 s by
 * default) so that a dead worker's events come back fast; a live worker keeps what it holds
 * with an in-progress ack (`+WPI`) for each held delivery, queued or running, every
 * `leaseMs / LEASE_RENEWALS`.
 *
 * The renewals run on the worker's event loop. A stall longer than the lease minus one
 * interval (a synchronous handler, a long GC pause) lets the lease lapse: the broker then
 * redelivers the event to another instance while the stalled handler still runs. That is
 * at-least-once, not loss; a longer `leaseMs` buys tolerance for such stalls.
 */
import { LEASE_RENEWALS } from "./options.js";
import { sendVerdict, type Held } from "./verdicts.js";

/** Shortest renewal interval, whatever ack wait an operator set. */
const MIN_RENEWAL_MS = 100;

/** Interval of the in-progress acks for a consumer whose ack wait is `leaseMs`. */
export function renewalInterval(leaseMs: number): number {
  return Math.max(MIN_RENEWAL_MS, Math.floor(leaseMs / LEASE_RENEWALS));
}

/** @internal Renews the leases of `held` until stopped, or until the connection is closed. */
export class LeaseKeeper {
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(leaseMs: number, held: ReadonlySet<Held>, closed: () => boolean) {
    this.#timer = setInterval(() => {
      if (closed()) return this.stop();
      for (const h of held) sendVerdict(() => h.msg.working());
    }, renewalInterval(leaseMs));
  }

  /** No renewal from now on: held events are redelivered one lease after their last one. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
