/**
 * Typed errors shared by server, worker and tabs. Each error has a stable string `code` from
 * one table, so it can be recognised after crossing a worker or socket boundary, where
 * `instanceof` no longer works.
 */

/** Every error code Tidemark produces. */
export const ErrorCode = {
  ResourceDrift: "RESOURCE_DRIFT",
  RetentionGap: "RETENTION_GAP",
  CursorMismatch: "CURSOR_MISMATCH",
  InvalidCursor: "INVALID_CURSOR",
  PayloadTooLarge: "PAYLOAD_TOO_LARGE",
  InvalidArgument: "INVALID_ARGUMENT",
  BrokerUnavailable: "BROKER_UNAVAILABLE",
  NatsServerNotFound: "NATS_SERVER_NOT_FOUND",
  StorageLimit: "STORAGE_LIMIT",
  TopicNotFound: "TOPIC_NOT_FOUND",
  Unauthorized: "UNAUTHORIZED",
  Forbidden: "FORBIDDEN",
  OriginRefused: "ORIGIN_REFUSED",
  LimitExceeded: "LIMIT_EXCEEDED",
  ProtocolError: "PROTOCOL_ERROR",
  WorkerStopTimeout: "WORKER_STOP_TIMEOUT",
  Closed: "CLOSED",
  Internal: "INTERNAL",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Base class of every Tidemark error. */
export class TidemarkError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TidemarkError";
    this.code = code;
  }
}

/** A declaration differs from the resource on the broker; the resource was not changed. */
export class ResourceDriftError extends TidemarkError {
  /** Names of the differing fields, e.g. `["owner", "retention.maxBytes"]`. */
  readonly fields: string[];
  constructor(message: string, fields: string[] = [], options?: ErrorOptions) {
    super(ErrorCode.ResourceDrift, message, options);
    this.name = "ResourceDriftError";
    this.fields = fields;
  }
}

/** The retained window no longer starts right after the requested position. */
export class RetentionGapError extends TidemarkError {
  /** The sequence the reader asked to continue after. */
  readonly requestedSequence: number;
  /** The first sequence still retained (last sequence + 1 when nothing is retained). */
  readonly firstAvailableSequence: number;
  constructor(
    message: string,
    positions: { requestedSequence: number; firstAvailableSequence: number },
    options?: ErrorOptions,
  ) {
    super(ErrorCode.RetentionGap, message, options);
    this.name = "RetentionGapError";
    this.requestedSequence = positions.requestedSequence;
    this.firstAvailableSequence = positions.firstAvailableSequence;
  }
}

/** The cursor belongs to another topic (or namespace). */
export class CursorMismatchError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.CursorMismatch, message, options);
    this.name = "CursorMismatchError";
  }
}

/** The value is not a Tidemark cursor at all. */
export class InvalidCursorError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidCursor, message, options);
    this.name = "InvalidCursorError";
  }
}

/** The JSON envelope of an event is over the topic's `maxPayloadBytes`. */
export class PayloadTooLargeError extends TidemarkError {
  readonly size: number;
  readonly limit: number;
  constructor(message: string, sizes: { size: number; limit: number }, options?: ErrorOptions) {
    super(ErrorCode.PayloadTooLarge, message, options);
    this.name = "PayloadTooLargeError";
    this.size = sizes.size;
    this.limit = sizes.limit;
  }
}

/** An argument is malformed: a bad topic id, tenant id, option, or non-JSON data. */
export class InvalidArgumentError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidArgument, message, options);
    this.name = "InvalidArgumentError";
  }
}

/** The broker could not be reached in time (disconnected, stopped, or JetStream unavailable). */
export class BrokerUnavailableError extends TidemarkError {
  /**
   * True when a failed `publish()` may still have stored its event (a request went out and no
   * answer came back); false when nothing can have been stored.
   */
  readonly maybeStored: boolean;
  /**
   * How long the server already retried this read before passing the error on (0: not retried).
   * A layer above passes such an error on instead of retrying it again (docs/reliability.md, "Retry rule").
   */
  readonly retriedMs: number;
  constructor(message: string, options?: ErrorOptions & { maybeStored?: boolean; retriedMs?: number }) {
    super(ErrorCode.BrokerUnavailable, message, options);
    this.name = "BrokerUnavailableError";
    this.maybeStored = options?.maybeStored ?? false;
    this.retriedMs = options?.retriedMs ?? 0;
  }
}

/** A `process()` handler that was still running when a worker stop's deadline passed. */
export interface RunningHandler {
  consumer: string;
  /** Undefined when the delivery could not be decoded as an event. */
  eventId?: string;
  streamSequence: number;
  /** 1-based delivery attempt. */
  attempt: number;
  /** How long it had been running at the deadline. */
  runningMs: number;
}

/**
 * `worker.stop({ timeoutMs })` or `sync.close()` reached its deadline while handlers still ran.
 * The stop did not complete: `handlers` lists what is still running.
 */
export class WorkerStopTimeoutError extends TidemarkError {
  readonly timeoutMs: number;
  readonly handlers: RunningHandler[];
  constructor(message: string, details: { timeoutMs: number; handlers: RunningHandler[] }, options?: ErrorOptions) {
    super(ErrorCode.WorkerStopTimeout, message, options);
    this.name = "WorkerStopTimeoutError";
    this.timeoutMs = details.timeoutMs;
    this.handlers = details.handlers;
  }

  /** One error for several workers that timed out together (`sync.close()`), listing every handler. */
  static combine(errors: readonly WorkerStopTimeoutError[]): WorkerStopTimeoutError {
    if (errors.length === 1) return errors[0]!;
    return new WorkerStopTimeoutError(errors.map((e) => e.message).join("; "), {
      timeoutMs: Math.max(...errors.map((e) => e.timeoutMs)),
      handlers: errors.flatMap((e) => e.handlers),
    });
  }
}

/** A topic the operation needs does not exist on the broker (destroyed, or re-created while read). */
export class TopicNotFoundError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.TopicNotFound, message, options);
    this.name = "TopicNotFoundError";
  }
}

/** The broker refused to reserve a stream's bytes (its store limit; the message names it). */
export class StorageLimitError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.StorageLimit, message, options);
    this.name = "StorageLimitError";
  }
}

/** The nats-server binary could not be found. The message says how to install it. */
export class NatsServerNotFoundError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.NatsServerNotFound, message, options);
    this.name = "NatsServerNotFoundError";
  }
}

/** No valid token: missing, failed verification, or expired. */
export class UnauthorizedError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Unauthorized, message, options);
    this.name = "UnauthorizedError";
  }
}

/** The principal is not allowed this subscription (or no longer is). */
export class ForbiddenError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Forbidden, message, options);
    this.name = "ForbiddenError";
  }
}

/**
 * The bridge refused the socket for its page's Origin (not in `origins`): final, a retry gets
 * the same answer. The client reports it in `failed` state; fix the bridge's `origins` option.
 */
export class OriginRefusedError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.OriginRefused, message, options);
    this.name = "OriginRefusedError";
  }
}

/** A limit was reached: frame size, subscriptions per connection, subscribe rate. */
export class LimitExceededError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.LimitExceeded, message, options);
    this.name = "LimitExceededError";
  }
}

/** A frame that breaks the wire protocol. */
export class ProtocolError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.ProtocolError, message, options);
    this.name = "ProtocolError";
  }
}

/** The Sync, hub or connection was closed before or during the operation. */
export class ClosedError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Closed, message, options);
    this.name = "ClosedError";
  }
}

/** A failure Tidemark has no better class for (an unexpected broker answer, a bug). */
export class InternalError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Internal, message, options);
    this.name = "InternalError";
  }
}

/** The class of each code: every code has one (the type checks that none is missing). */
export const errorClasses = {
  [ErrorCode.ResourceDrift]: ResourceDriftError,
  [ErrorCode.RetentionGap]: RetentionGapError,
  [ErrorCode.CursorMismatch]: CursorMismatchError,
  [ErrorCode.InvalidCursor]: InvalidCursorError,
  [ErrorCode.PayloadTooLarge]: PayloadTooLargeError,
  [ErrorCode.InvalidArgument]: InvalidArgumentError,
  [ErrorCode.BrokerUnavailable]: BrokerUnavailableError,
  [ErrorCode.NatsServerNotFound]: NatsServerNotFoundError,
  [ErrorCode.StorageLimit]: StorageLimitError,
  [ErrorCode.TopicNotFound]: TopicNotFoundError,
  [ErrorCode.Unauthorized]: UnauthorizedError,
  [ErrorCode.Forbidden]: ForbiddenError,
  [ErrorCode.OriginRefused]: OriginRefusedError,
  [ErrorCode.LimitExceeded]: LimitExceededError,
  [ErrorCode.ProtocolError]: ProtocolError,
  [ErrorCode.WorkerStopTimeout]: WorkerStopTimeoutError,
  [ErrorCode.Closed]: ClosedError,
  [ErrorCode.Internal]: InternalError,
} as const satisfies { [C in ErrorCode]: abstract new (...args: never[]) => TidemarkError & { code: ErrorCode } };

const codes = new Set<string>(Object.values(ErrorCode));

/** True when `value` carries a known Tidemark error code (works across realms). */
export function isTidemarkError(value: unknown): value is { code: ErrorCode; message: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    codes.has((value as { code: string }).code)
  );
}
