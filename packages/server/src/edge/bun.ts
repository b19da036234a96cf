/**
 * @tidemark/server/edge/bun: the bridge on Bun, with Hono's Bun WebSocket adapter. Bun routes
 * socket events through the server's `websocket` handler, so `Bun.serve` needs both parts.
 *
 * @example
 * import { createBunBridge } from "@tidemark/server/edge/bun";
 * const { bridge, websocket } = createBunBridge({ sync, topics, authenticate });
 * Bun.serve({ port: 8080, fetch: bridge.app.fetch, websocket });
 */
import { upgradeWebSocket, websocket } from "hono/bun";
import { createBridge, type Bridge } from "../bridge/bridge.js";
import type { BridgeOptions } from "../bridge/options.js";

/** A bridge and the `websocket` handler to pass to `Bun.serve` beside `fetch: bridge.app.fetch`. */
export function createBunBridge<P = unknown>(options: Omit<BridgeOptions<P>, "upgradeWebSocket">): { bridge: Bridge; websocket: typeof websocket } {
  return { bridge: createBridge<P>({ ...options, upgradeWebSocket }), websocket };
}
