/**
 * @internal One timer for every connection's deadlines and heartbeats: no timer per socket.
 * A sweep asks each connection to check itself (`Connection.tick`) once; it is spread over
 * several ticks, a slice of the connections at each, so that 10,000 connections never hold the
 * event loop for one long turn (a delivery waiting behind it is a publish-to-delivery tail).
 */
import type { BridgeContext } from "./context.js";

/** The shortest tick; a sweep of at most this long runs in one tick. */
const MIN_TICK_MS = 10;
/** Ticks per sweep at most. */
const MAX_SLICES = 20;

/** Starts the ticker; returns its stop function. */
export function startTicker<P>(context: BridgeContext<P>): () => void {
  const { limits, heartbeatMs } = context.options;
  // A sweep is fine enough for the shortest deadline it enforces, never busier than every 10 ms.
  const sweepMs = Math.max(MIN_TICK_MS, Math.min(1000, limits.unauthenticatedTimeMs / 4, heartbeatMs / 4));
  const slices = Math.max(1, Math.min(MAX_SLICES, Math.floor(sweepMs / MIN_TICK_MS)));
  // A Set's iterator survives changes: a connection added meanwhile is visited later in the
  // sweep, one deleted before its turn is skipped.
  let sweep: Iterator<{ tick(now: number): void }> | undefined;
  let left = 0;
  let tick = 0;
  const tickMs = sweepMs / slices;
  const timer = setInterval(() => {
    // Deadlines are measured on the bridge's clock: a tick that comes late means the loop did
    // not turn meanwhile, and that time is not counted against the clients (stall.ts).
    const now = context.clock.tick(tickMs);
    if (!sweep) {
      // The shorter hello deadline under pressure: silent sockets are kept oldest first, so
      // this looks only at the ones it closes (and one more).
      context.unauthenticated.shedLate(now);
      sweep = context.connections.values();
      left = context.connections.size;
      tick = 0;
    }
    // This tick's share of what is left, so that the sweep ends on its last tick.
    let n = Math.ceil(left / Math.max(1, slices - tick++));
    left -= n;
    while (n-- > 0) {
      const next = sweep.next();
      if (next.done) break;
      next.value.tick(now);
    }
    if (tick >= slices) sweep = undefined;
  }, tickMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
