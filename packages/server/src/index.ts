/** @tidemark/server: retained event topics on NATS JetStream, the embedded NATS, the bridge. */
// Loading the Node platform registers TCP NATS, the embedded server and the environment defaults.
export { createSync, syncOptionsFromEnv } from "./core/node-sync.js";
export { configureSync, lazySync, getDefaultSync } from "./core/sync.js";
export type { SyncOptions } from "./core/sync.js";
export type { ExternalNatsOptions } from "./core/connection.js";
export { TOPIC_DEFAULTS } from "./core/options.js";
export { StorageLimitError } from "./core/provision.js";
export type {
  Sync,
  NatsServerInfo,
  Topic,
  TopicOptions,
  RetentionOptions,
  ResolvedTopicOptions,
  TopicInfo,
  SyncStats,
  PublishOptions,
  PublishReceipt,
  ReplayOptions,
  FollowOptions,
  LiveOptions,
  Hub,
  HubSubscribeOptions,
  ProcessOptions,
  ProcessStart,
  ProcessEvent,
  Worker,
  DeadLetter,
  DeadLetters,
  Checkpoint,
  Watch,
  WatchOptions,
} from "./core/types.js";
export { startEmbeddedNats, EmbeddedNatsError } from "./embedded/server.js";
export type { Durability, EmbeddedNats, EmbeddedNatsOptions } from "./embedded/server.js";
export type { NatsCredentials } from "./embedded/credentials.js";
export { findNatsServer, natsServerVersion, NatsServerNotFoundError } from "./embedded/binary.js";
export {
  ErrorCode,
  TidemarkError,
  ResourceDriftError,
  RetentionGapError,
  CursorMismatchError,
  InvalidCursorError,
  PayloadTooLargeError,
  InvalidArgumentError,
  BrokerUnavailableError,
  WorkerStopTimeoutError,
  isTidemarkError,
} from "@tidemark/shared";
export type { Cursor, TidemarkEvent, RunningHandler } from "@tidemark/shared";
export { HubRegistry, SharedHub, hubRegistryOf } from "./hub/index.js";
export type { HubMode, HubRegistryOptions, HubProgress, SharedHubSubscribeOptions } from "./hub/index.js";
export { createBridge, expose, createNodeBridge, serveBridge, DEFAULT_LIMITS, jsonLogger } from "./bridge/index.js";
export type {
  Bridge,
  BridgeOptions,
  BridgeLimits,
  ExposedTopic,
  AuthorizeRequest,
  ServeBridgeOptions,
  BridgeServer,
  Logger,
  LogRecord,
  LogLevel,
} from "./bridge/index.js";
export { defineConfig } from "./cli/config.js";
export type { TidemarkConfig, ConfigTopic, ConfigModule } from "./cli/config.js";
// Loading the process module registers topic.process() and topic.deadLetters() with every Sync.
export { PROCESS_DEFAULTS } from "./process/index.js";
// Signed-token authentication for the bridge (jose: HS256/ES256, expiry, revocation hook).
export { tokenAuthenticator } from "./auth/index.js";
export type { TokenAuthenticatorOptions, TokenPrincipal } from "./auth/index.js";
