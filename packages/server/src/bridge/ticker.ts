/**
 * @internal One timer for every connection's deadlines and heartbeats: no timer per socket.
 * Each tick asks each connection to check itself (`Connection.tick`).
 */
import type { BridgeContext } from "./context.js";

/** Starts the ticker; returns its stop function. */
export function startTicker<P>(context: BridgeContext<P>): () => void {
  const { limits, heartbeatMs } = context.options;
  // Fine enough for the shortest deadline it enforces, never busier than every 10 ms.
  const intervalMs = Math.max(10, Math.min(1000, limits.unauthenticatedTimeMs / 4, heartbeatMs / 4));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const c of context.connections) c.tick(now);
  }, intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
