/**
 * Errors across a worker or socket boundary: `toErrorPayload` makes a plain, structured-clone
 * safe description, `fromErrorPayload` rebuilds the class of its code (see `errorClasses`).
 */
import {
  BrokerUnavailableError,
  ErrorCode,
  errorClasses,
  InternalError,
  isTidemarkError,
  PayloadTooLargeError,
  ResourceDriftError,
  RetentionGapError,
  WorkerStopTimeoutError,
  type RunningHandler,
  type TidemarkError,
} from "./errors.js";

/** A plain, structured-clone-safe description of an error. */
export interface ErrorPayload {
  code: ErrorCode;
  name: string;
  message: string;
  details?: Record<string, unknown>;
}

const DETAIL_KEYS = ["fields", "requestedSequence", "firstAvailableSequence", "size", "limit", "timeoutMs", "handlers", "maybeStored"];

/** Serialises an error for a wire or worker boundary. Unknown errors become `INTERNAL`. */
export function toErrorPayload(err: unknown): ErrorPayload {
  if (isTidemarkError(err)) {
    const e = err as TidemarkError & Record<string, unknown>;
    const details: Record<string, unknown> = {};
    for (const key of DETAIL_KEYS) {
      if (e[key] !== undefined) details[key] = e[key];
    }
    return { code: e.code, name: e.name, message: e.message, details };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: ErrorCode.Internal, name: err instanceof Error ? err.name : "Error", message };
}

type WithDetails = "RESOURCE_DRIFT" | "RETENTION_GAP" | "PAYLOAD_TOO_LARGE" | "BROKER_UNAVAILABLE" | "WORKER_STOP_TIMEOUT";

// The classes that carry nothing but their message (the others are rebuilt field by field below).
const messageOnly: { [C in Exclude<ErrorCode, WithDetails>]: new (message: string) => TidemarkError } = {
  [ErrorCode.CursorMismatch]: errorClasses[ErrorCode.CursorMismatch],
  [ErrorCode.InvalidCursor]: errorClasses[ErrorCode.InvalidCursor],
  [ErrorCode.InvalidArgument]: errorClasses[ErrorCode.InvalidArgument],
  [ErrorCode.NatsServerNotFound]: errorClasses[ErrorCode.NatsServerNotFound],
  [ErrorCode.StorageLimit]: errorClasses[ErrorCode.StorageLimit],
  [ErrorCode.TopicNotFound]: errorClasses[ErrorCode.TopicNotFound],
  [ErrorCode.Unauthorized]: errorClasses[ErrorCode.Unauthorized],
  [ErrorCode.Forbidden]: errorClasses[ErrorCode.Forbidden],
  [ErrorCode.OriginRefused]: errorClasses[ErrorCode.OriginRefused],
  [ErrorCode.LimitExceeded]: errorClasses[ErrorCode.LimitExceeded],
  [ErrorCode.ProtocolError]: errorClasses[ErrorCode.ProtocolError],
  [ErrorCode.Closed]: errorClasses[ErrorCode.Closed],
  [ErrorCode.Internal]: InternalError,
};

/** Rebuilds the error class for a payload made by {@link toErrorPayload}; an unknown code is an InternalError. */
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
    case ErrorCode.PayloadTooLarge:
      return new PayloadTooLargeError(payload.message, {
        size: Number(d.size ?? 0),
        limit: Number(d.limit ?? 0),
      });
    case ErrorCode.BrokerUnavailable:
      return new BrokerUnavailableError(payload.message, { maybeStored: d.maybeStored === true });
    case ErrorCode.WorkerStopTimeout:
      return new WorkerStopTimeoutError(payload.message, {
        timeoutMs: Number(d.timeoutMs ?? 0),
        handlers: Array.isArray(d.handlers) ? (d.handlers as RunningHandler[]) : [],
      });
    default: {
      const Class = (messageOnly as Partial<Record<string, new (message: string) => TidemarkError>>)[payload.code] ?? InternalError;
      return new Class(payload.message);
    }
  }
}
