/** @tidemark/server: retained event topics on NATS JetStream, the embedded NATS, the bridge. */
// The Node platform (TCP NATS, the embedded server, hubs, workers, environment defaults) is built
// in node-sync.ts and passed to every Sync it makes; no module registers anything on import.
export { createSync, syncOptionsFromEnv, configureSync, lazySync, getDefaultSync } from "./node-sync.js";
export type { SyncOptions } from "./core/sync.js";
export type { SyncLogger } from "./core/broker-log.js";
export type { ExternalNatsOptions } from "./transport/types.js";
export { TOPIC_DEFAULTS } from "./core/options.js";
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
  StorageLimitError,
  TopicNotFoundError,
  ClosedError,
  InternalError,
  isTidemarkError,
} from "@tidemark/shared";
export type { Cursor, TidemarkEvent, RunningHandler } from "@tidemark/shared";
export { HubRegistry, SharedHub } from "./hub/registry.js";
export { hubRegistryOf } from "./hub/feature.js";
export type { HubMode, HubRegistryOptions, HubProgress, SharedHubSubscribeOptions } from "./hub/registry.js";
export { createBridge, expose, createNodeBridge, serveBridge, DEFAULT_LIMITS, WHOLE_TOPIC } from "./bridge/index.js";
export type {
  WholeTopicGrant,
  AuthorizeResult,
  Bridge,
  BridgeOptions,
  BridgeLimits,
  ExposedTopic,
  AuthorizeRequest,
  ServeBridgeOptions,
  BridgeServer,
  Logger,
  LogRecord,
  LogFunction,
  LogLevel,
} from "./bridge/index.js";
export { defineConfig } from "./cli/config.js";
export type { TidemarkConfig, ConfigTopic, ConfigModule } from "./cli/config.js";
export { PROCESS_DEFAULTS } from "./process/options.js";
// Signed-token authentication for the bridge (jose: HS256/ES256, expiry, revocation hook).
export { signToken, tokenAuthenticator } from "./auth/index.js";
export type { SignTokenOptions, TokenAuthenticate, TokenAuthenticatorOptions, TokenClaims, TokenPrincipal } from "./auth/index.js";
