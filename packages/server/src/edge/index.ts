/**
 * @tidemark/server/edge: the runtime-neutral entry. The topic core, hubs, workers and the bridge
 * over NATS reached by WebSocket (`wsconnect`), with no Node module: Deno, Bun, Cloudflare
 * Workers, or any runtime with `WebSocket`, `fetch` and timers. Runtime glue: `./deno`, `./bun`,
 * `./workers`. What the Node entry exports too is listed once, in `../common.ts`.
 *
 * @example
 * import { createSync, createBridge } from "@tidemark/server/edge";
 * const sync = createSync({ nats: { servers: "wss://nats.example:443" } });
 */
export * from "../common.js";
export { createSync, configureSync, lazySync, getDefaultSync } from "./platform.js";
export type { EdgeSyncOptions } from "./platform.js";
export { websocketTransport } from "../transport/websocket.js";
export type { NatsConnect, NatsTransport } from "../transport/types.js";
