/** @tidemark/server: retained event topics on NATS JetStream, the embedded NATS, the bridge. */
// The Node platform (TCP NATS, the embedded server, hubs, workers, environment defaults) is built
// in node-sync.ts and passed to every Sync it makes; no module registers anything on import.
// What the edge entry exports too is listed once, in common.ts.
export * from "./common.js";
export { createSync, syncOptionsFromEnv, configureSync, lazySync, getDefaultSync } from "./node-sync.js";
export { startEmbeddedNats, EmbeddedNatsError } from "./embedded/server.js";
export type { Durability, EmbeddedNats, EmbeddedNatsOptions } from "./embedded/server.js";
export type { NatsCredentials } from "./embedded/credentials.js";
export { findNatsServer, natsServerVersion, NatsServerNotFoundError } from "./embedded/binary.js";
export { createNodeBridge, serveBridge } from "./bridge/index.js";
export type { ServeBridgeOptions, BridgeServer } from "./bridge/index.js";
export { serveBridgeUws } from "./bridge/index.js";
export type { ServeBridgeUwsOptions, UwsBridgeServer, UwsModule, UwsWebSocket } from "./bridge/index.js";
export { defineConfig } from "./cli/config.js";
export type { TidemarkConfig, ConfigTopic, ConfigModule } from "./cli/config.js";
