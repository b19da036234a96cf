/**
 * @tidemark/server/edge/deno: the bridge on Deno, with Hono's Deno WebSocket adapter.
 *
 * @example
 * import { createSync } from "@tidemark/server/edge";
 * import { createDenoBridge } from "@tidemark/server/edge/deno";
 * const bridge = createDenoBridge({ sync, topics, authenticate });
 * Deno.serve({ port: 8080 }, bridge.app.fetch);
 */
import { upgradeWebSocket as denoUpgrade } from "hono/deno";
import type { Context } from "hono";
import type { UpgradeWebSocket, WSEvents } from "hono/ws";
import { createBridge, type Bridge } from "../bridge/bridge.js";
import type { BridgeOptions } from "../bridge/options.js";

/**
 * @internal Deno closes the upgrade Request once the 101 response is out ("TypeError: Request
 * closed" on `headers`), but the bridge reads it at `hello` (for `authenticate`): its events
 * get a detached copy (URL and headers) while Deno upgrades the original.
 */
export const upgradeWebSocket = ((createEvents: (c: Context) => WSEvents | Promise<WSEvents>, options?: unknown) =>
  denoUpgrade((c) => {
    const raw = c.req.raw;
    const req = Object.create(c.req, { raw: { value: new Request(raw.url, { headers: raw.headers }) } }) as Context["req"];
    return createEvents(Object.create(c, { req: { value: req } }) as Context);
  }, options as never)) as UpgradeWebSocket;

/** `createBridge()` with Deno's WebSocket upgrade. Serve `bridge.app.fetch` with `Deno.serve`. */
export function createDenoBridge<P = unknown>(options: Omit<BridgeOptions<P>, "upgradeWebSocket">): Bridge {
  return createBridge<P>({ ...options, upgradeWebSocket });
}
