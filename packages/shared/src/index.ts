/** @tidemark/shared: what server, worker and tabs agree on. */
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
  TopicNotFoundError,
  StorageLimitError,
  NatsServerNotFoundError,
  UnauthorizedError,
  ForbiddenError,
  OriginRefusedError,
  LimitExceededError,
  ProtocolError,
  ClosedError,
  InternalError,
  errorClasses,
  isTidemarkError,
} from "./errors.js";
export type { RunningHandler } from "./errors.js";
export { toErrorPayload, fromErrorPayload } from "./error-payload.js";
export type { ErrorPayload } from "./error-payload.js";
export { encodeCursor, decodeCursor, isCursor, cursorPrefix, cursorWithPrefix, MAX_CURSOR_LENGTH } from "./cursor.js";
export type { Cursor, CursorParts } from "./cursor.js";
export {
  TOPIC_ID_PATTERN,
  NAMESPACE_PATTERN,
  MAX_TENANT_BYTES,
  NO_TENANT_TOKEN,
  assertTopicId,
  assertNamespace,
  assertTenantId,
  encodeTenant,
  decodeTenant,
  topicToken,
  topicFromToken,
} from "./names.js";
export { encodeEnvelope, decodeEnvelope, eventIdFor } from "./envelope.js";
export { assertJsonValue } from "./json-value.js";
export type { Envelope, TidemarkEvent } from "./envelope.js";
export { toBase64Url, fromBase64Url, utf8Length } from "./base64url.js";
export { backoffDelay, backoffCeiling } from "./backoff.js";
export type { Backoff } from "./backoff.js";
export { PROTOCOL_VERSION, PROTOCOL_REVISION, SERVER_SILENT_BEATS, PONG_AFTER_BEATS, PROTOCOL_NAME, MAX_INITIAL_EVENTS, MAX_READ_ITEMS, SubscriptionMode, ResetReason, LimitName, CloseCode } from "./protocol.js";
export type {
  ClientFrame,
  ServerFrame,
  HelloFrame,
  SubscribeFrame,
  UnsubscribeFrame,
  RefreshFrame,
  PingFrame,
  PongFrame,
  WelcomeFrame,
  RefreshedFrame,
  SubscribedFrame,
  EventFrame,
  CaughtUpFrame,
  ResetFrame,
  UnsubscribedFrame,
  ErrorFrame,
  DrainFrame,
  InitialPage,
  ReadStateWire,
  MarkReadFrame,
  ReadStateFrame,
} from "./protocol.js";
