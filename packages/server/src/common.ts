/**
 * The names the Node entry (`index.ts`) and the edge entry (`edge/index.ts`) both export: the
 * topic core's types, the errors, hubs, the bridge, workers' defaults and token auth. Both
 * entries re-export this module whole, so a name added here reaches both; what differs (how a
 * Sync is made, the embedded server, Node serving, the WebSocket transport) stays in each entry.
 * Every name is written out here: this list is the shared public surface.
 */
export type { SyncOptions } from "./core/sync.js";
export type { SyncLogger } from "./core/connection/broker-log.js";
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
  FirstPage,
  ReadState,
  ReadStateHandle,
  ReadStateWatch,
  Watch,
  WatchOptions,
} from "./core/types.js";
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
  LimitExceededError,
  InternalError,
  isTidemarkError,
} from "@tidemark/shared";
export type { Cursor, TidemarkEvent, RunningHandler } from "@tidemark/shared";
export { HubRegistry, SharedHub } from "./hub/registry.js";
export { hubRegistryOf } from "./hub/feature.js";
export type { HubMode, HubRegistryOptions, HubProgress, LiveSink, SharedHubSubscribeOptions } from "./hub/registry.js";
export { createBridge, expose } from "./bridge/bridge.js";
export type { Bridge } from "./bridge/bridge.js";
export { DEFAULT_LIMITS } from "./bridge/options.js";
export { WHOLE_TOPIC } from "./bridge/grant.js";
export type { WholeTopicGrant, AuthorizeResult } from "./bridge/grant.js";
export type { BridgeOptions, BridgeLimits, ExposedTopic, AuthorizeRequest } from "./bridge/options.js";
export type { Logger, LogFunction, LogRecord, LogLevel } from "./bridge/log.js";
export { PROCESS_DEFAULTS } from "./process/options.js";
// Where metrics go: `createSync({ meters })`, `createBridge({ meters })`.
export { createMeterRegistry } from "./observe/meters.js";
export type { MeterRegistry, MeterRegistryOptions } from "./observe/meters.js";
// Signed-token authentication (jose over Web Crypto: runs on every runtime).
export { signToken, tokenAuthenticator } from "./auth/index.js";
export type { SignTokenOptions, TokenAuthenticate, TokenAuthenticatorOptions, TokenClaims, TokenPrincipal } from "./auth/index.js";
