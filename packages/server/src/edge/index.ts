/**
 * @tidemark/server/edge: the runtime-neutral entry. The topic core, hubs, workers and the bridge
 * over NATS reached by WebSocket (`wsconnect`), with no Node module: Deno, Bun, Cloudflare
 * Workers, or any runtime with `WebSocket`, `fetch` and timers. Runtime glue: `./deno`, `./bun`,
 * `./workers`.
 *
 * @example
 * import { createSync, createBridge } from "@tidemark/server/edge";
 * const sync = createSync({ nats: { servers: "wss://nats.example:443" } });
 */
export { createSync, configureSync, lazySync, getDefaultSync } from "./platform.js";
export type { EdgeSyncOptions } from "./platform.js";
export type { SyncOptions } from "../core/sync.js";
export type { SyncLogger } from "../core/broker-log.js";
export type { ExternalNatsOptions } from "../transport/types.js";
export { websocketTransport } from "../transport/websocket.js";
export type { NatsConnect, NatsTransport } from "../transport/types.js";
export { TOPIC_DEFAULTS } from "../core/options.js";
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
} from "../core/types.js";
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
export { HubRegistry, SharedHub } from "../hub/registry.js";
export { hubRegistryOf } from "../hub/feature.js";
export type { HubMode, HubRegistryOptions, HubProgress, SharedHubSubscribeOptions } from "../hub/registry.js";
export { createBridge, expose } from "../bridge/bridge.js";
export type { Bridge } from "../bridge/bridge.js";
export { DEFAULT_LIMITS } from "../bridge/options.js";
export { WHOLE_TOPIC } from "../bridge/grant.js";
export type { WholeTopicGrant, AuthorizeResult } from "../bridge/grant.js";
export type { BridgeOptions, BridgeLimits, ExposedTopic, AuthorizeRequest } from "../bridge/options.js";
export type { Logger, LogFunction, LogRecord, LogLevel } from "../bridge/log.js";
export { PROCESS_DEFAULTS } from "../process/options.js";
// Signed-token authentication (jose over Web Crypto: runs on every runtime).
export { signToken, tokenAuthenticator } from "../auth/index.js";
export type { SignTokenOptions, TokenAuthenticate, TokenAuthenticatorOptions, TokenClaims, TokenPrincipal } from "../auth/index.js";
