/** @tidemark/client: one WebSocket per browser profile, shared by every tab. */
export { createClient } from "./tab/client.js";
export type { Client, ClientOptions, ClientState, Feed, ItemsInfo, Transport } from "./tab/client.js";
export type { FeedItem, FeedSpec, EngineStats } from "./types.js";
export type { Status } from "./state.js";
export { backoffDelay } from "./backoff.js";
// Thrown for bad options (createClient, feed(), backoffDelay); re-exported for @tidemark/react and apps.
export { InvalidArgumentError } from "@tidemark/shared";
export type { BackoffOptions } from "./backoff.js";
