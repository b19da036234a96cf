/**
 * @internal The one entry through which the workspace's tests and benchmarks reach the server's
 * internals (`@tidemark/server/internal` under the `@tidemark/source` condition, or this file by
 * path from `packages/server/test`). Not published: the package's `publishConfig.exports` lacks
 * it and nothing here is covered by semver. Public names come from `index.ts`; only what the
 * public entries do not export is listed here, by the module that owns it, so a file moved
 * inside `src/` changes one import line here instead of every test. Node only (the embedded
 * server and the TCP transport are here).
 */
// The topic core: a Sync of the core alone, a topic's runtime, broker names and stream configs.
export { createCoreSync, createSyncWith, publishesPending } from "./core/sync.js";
export type { CoreTopic } from "./core/types.js";
export { runtimeOf } from "./core/topic.js";
export type { TopicHandles, TopicRuntime } from "./core/runtime.js";
export { brokerNames, checkpointBucket, checkpointKey, claimSubject, durableName, eventStreamPrefix, topicNames } from "./core/resources/broker-names.js";
export { resolveTopicOptions } from "./core/options.js";
export { eventStreamConfig, deadLetterStreamConfig } from "./core/resources/streams.js";
export { featuresOf } from "./broker/features.js";
// Publishing: one call's retries, its requests and headers, and NATS error mapping.
export { confirmStreamGone, sendWithRetry, type SendContext } from "./core/publish/publish.js";
export { publishHeaderPrefix } from "./core/publish/publish-headers.js";
export { LeaderElected, PublishRequests } from "./core/publish/publish-request.js";
export { ConnectionDrops } from "./core/connection/connection-drops.js";
export { isNoResponders, isTransient, jsErrorCode, mapNatsError } from "./core/errors.js";
export { traceableHeaders } from "./core/read/trace-probe.js";
// Reading: batches, decoding, direct reads.
export { MessageBatches } from "./core/read/message-batches.js";
export { BatchedEvents } from "./core/read/batched-events.js";
export { decodeEvent } from "./core/read/decode-event.js";
export { decodeDelivered } from "./core/read/decode-delivered.js";
export { DIRECT_READ_MAX, DIRECT_READ_MAX_BYTES, DIRECT_SINGLE_MAX } from "./core/read/direct-read.js";
// Workers, hubs and the bridge.
export { encodeDeclaration, type Declaration } from "./process/options.js";
export { eventSizer, sizeOnce } from "./hub/size-estimate.js";
export { readWindow } from "./hub/window.js";
export { parseClientFrame } from "./bridge/frames.js";
// Node: the TCP transport and the embedded server's pieces.
export { nodeTransport } from "./transport/node.js";
export { alive, DataDirInUseError, stopStaleServer } from "./embedded/stale.js";
export { renderNatsConfig } from "./embedded/config.js";
export { toolsSearchDirs } from "./embedded/binary.js";
