/** The WebSocket bridge: hub and live subscriptions of exposed topics, for browser tabs. */
export { createBridge, expose } from "./bridge.js";
export type { Bridge } from "./bridge.js";
export { createNodeBridge, serveBridge } from "./node/serve.js";
export type { ServeBridgeOptions, BridgeServer } from "./node/serve.js";
export { serveBridgeUws } from "./uws/serve.js";
export type { ServeBridgeUwsOptions, UwsBridgeServer, UwsModule, UwsWebSocket } from "./uws/serve.js";
export { DEFAULT_LIMITS } from "./options.js";
export { WHOLE_TOPIC } from "./grant.js";
export type { WholeTopicGrant, AuthorizeResult } from "./grant.js";
export type { BridgeOptions, BridgeLimits, ExposedTopic, AuthorizeRequest } from "./options.js";
export type { Logger, LogFunction, LogRecord, LogLevel } from "./log.js";
