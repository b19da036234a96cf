/**
 * @internal Graceful drain: new upgrades are refused, every client is told to reconnect after a
 * random delay (so they do not all come back at once), and sockets still open after the grace
 * period are closed with 1001.
 */
import { CloseCode } from "@tidemark/shared";
import { encode } from "./frames.js";
import type { BridgeContext } from "./context.js";

/** Tells one connection to go elsewhere, after a jittered delay in `[0, drainSpreadMs]`. */
export function sendDrain<P>(context: BridgeContext<P>, connection: { send(text: string): void }): void {
  connection.send(encode({ type: "drain", retryAfterMs: Math.round(Math.random() * context.options.drainSpreadMs) }));
}

/** Drains the bridge; resolves when every connection is closed. */
export async function drain<P>(context: BridgeContext<P>, graceMs: number): Promise<void> {
  if (!context.draining) {
    context.draining = true;
    context.log("info", "draining", { connections: context.connections.size });
    for (const c of context.connections) sendDrain(context, c);
  }
  const end = Date.now() + graceMs;
  while (context.connections.size > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  for (const c of [...context.connections]) c.close(CloseCode.GoingAway, "server shutting down");
}
