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
  constructor(message: string, options?: ErrorOptions & { maybeStored?: boolean }) {
    super(ErrorCode.BrokerUnavailable, message, options);
    this.name = "BrokerUnavailableError";
    this.maybeStored = options?.maybeStored ?? false;
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

const classes = {
  [ErrorCode.ResourceDrift]: "ResourceDriftError",
  [ErrorCode.RetentionGap]: "RetentionGapError",
  [ErrorCode.CursorMismatch]: "CursorMismatchError",
  [ErrorCode.InvalidCursor]: "InvalidCursorError",
  [ErrorCode.PayloadTooLarge]: "PayloadTooLargeError",
  [ErrorCode.InvalidArgument]: "InvalidArgumentError",
  [ErrorCode.BrokerUnavailable]: "BrokerUnavailableError",
  [ErrorCode.WorkerStopTimeout]: "WorkerStopTimeoutError",
} as Partial<Record<ErrorCode, string>>;

/** A plain, structured-clone-safe description of an error. */
export interface ErrorPayload {
  code: ErrorCode;
  name: string;
  message: string;
  details?: Record<string, unknown>;
}

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

/** Serialises an error for a wire or worker boundary. Unknown errors become `INTERNAL`. */
export function toErrorPayload(err: unknown): ErrorPayload {
  if (isTidemarkError(err)) {
    const e = err as TidemarkError & Record<string, unknown>;
    const details: Record<string, unknown> = {};
    for (const key of ["fields", "requestedSequence", "firstAvailableSequence", "size", "limit", "timeoutMs", "handlers", "maybeStored"]) {
      if (e[key] !== undefined) details[key] = e[key];
    }
    return { code: e.code, name: e.name, message: e.message, details };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: ErrorCode.Internal, name: err instanceof Error ? err.name : "Error", message };
}

/** Rebuilds the error class for a payload made by {@link toErrorPayload}. */
export function fromErrorPayload(payload: ErrorPayload): TidemarkError {
  const d = payload.details ?? {};
  switch (payload.code) {
    case ErrorCode.ResourceDrift:
      return new ResourceDriftError(payload.message, (d.fields as string[]) ?? []);
    case ErrorCode.RetentionGap:
      return new RetentionGapError(payload.message, {
        requestedSequence: Number(d.requestedSequence ?? 0),
        firstAvailableSequence: Number(d.firstAvailableSequence ?? 0),
      });
    case ErrorCode.CursorMismatch:
      return new CursorMismatchError(payload.message);
    case ErrorCode.InvalidCursor:
      return new InvalidCursorError(payload.message);
    case ErrorCode.PayloadTooLarge:
      return new PayloadTooLargeError(payload.message, {
        size: Number(d.size ?? 0),
        limit: Number(d.limit ?? 0),
      });
    case ErrorCode.InvalidArgument:
      return new InvalidArgumentError(payload.message);
    case ErrorCode.BrokerUnavailable:
      return new BrokerUnavailableError(payload.message, { maybeStored: d.maybeStored === true });
    case ErrorCode.WorkerStopTimeout:
      return new WorkerStopTimeoutError(payload.message, {
        timeoutMs: Number(d.timeoutMs ?? 0),
        handlers: Array.isArray(d.handlers) ? (d.handlers as RunningHandler[]) : [],
      });
    default: {
      const e = new TidemarkError(codes.has(payload.code) ? payload.code : ErrorCode.Internal, payload.message);
      e.name = classes[payload.code] ?? payload.name ?? "TidemarkError";
      return e;
    }
  }
}
