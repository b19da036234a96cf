/**
 * NATS failures become Tidemark errors here, in one place (like nats.js's parseJsResponse):
 * every JetStream API error code Tidemark reacts to, one predicate per answer, and the mapping
 * of everything else to a Tidemark error class. No other module reads `err_code` or matches a
 * NATS error message.
 */
import { BrokerUnavailableError, InternalError, TidemarkError } from "@tidemark/shared";
import { errors as natsErrors } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError } from "@nats-io/jetstream";

/** JetStream API error codes Tidemark reacts to. */
export const JsCode = {
  StreamNotFound: 10059,
  ConsumerNotFound: 10014,
  NoMessageFound: 10037,
  /** A publish's `expect.lastSubjectSequence` did not hold (another writer was first). */
  WrongLastSequence: 10071,
  /** The same, when the server cannot tell the last sequence (KV update on 2.10+). */
  WrongLastSequenceUnknown: 10164,
  StreamNameInUse: 10058,
  /** A consumer limit (the stream's, the account's, or nats-server 2.15's default of 1,000 per stream). */
  MaximumConsumersLimit: 10026,
  /** A stream create failed; the file store's failures all read "error creating store for stream". */
  StreamCreate: 10049,
  InsufficientResources: 10023,
  StorageResourcesExceeded: 10047,
  MaxBytesRequired: 10113,
  /** JetStream system temporarily unavailable (a cluster without a meta leader). */
  ClusterNotAvailable: 10008,
  /**
   * A publish with this message id is still being proposed (the leader staged it, its commit
   * waits on the peers, e.g. across a partition): it may yet be stored, and a send with the
   * same id gets the duplicate ack once it is.
   */
  DuplicateMessageInProcess: 10158,
  /**
   * Storing a message failed (the description is the store's error). "store is closed" is the
   * answer of a replicated stream's leader whose stream stopped (a reset, a step-down, a
   * shutdown) after the message was proposed and committed: the other replicas store it.
   */
  StreamStoreFailed: 10077,
} as const;

/**
 * The stream's store closed under a publish it had already taken (see JsCode.StreamStoreFailed):
 * the event may be stored on the other replicas, and a send with the same id reaches the next
 * leader, which stores it or answers it as a duplicate.
 */
export function isStoreClosed(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.StreamStoreFailed && /store is closed/i.test((err as Error).message);
}

/** The JetStream API error code of `err`, when it is one. */
export function jsErrorCode(err: unknown): number | undefined {
  if (err instanceof JetStreamApiError) return err.apiError().err_code;
  return undefined;
}

/** The stream does not exist. */
export function isStreamNotFound(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.StreamNotFound;
}

/** The durable consumer does not exist. */
export function isConsumerNotFound(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.ConsumerNotFound;
}

/** A direct get found no message (e.g. no last message on that subject). */
export function isNoMessageFound(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.NoMessageFound;
}

/**
 * A batched direct get found nothing at or after its start (for its subject): status 404 on the
 * message, or nats.js's "message not found".
 */
export function isDirectGetEmpty(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 404 || (err instanceof Error && /message not found/i.test(err.message));
}

/** A stream of that name exists already (with another configuration). */
export function isStreamNameInUse(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.StreamNameInUse;
}

/** A consumer limit was reached, or a stream's `max_consumers` is over the account's limit. */
export function isMaximumConsumersLimit(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.MaximumConsumersLimit;
}

/**
 * The broker's file store could not set up a new stream: nats-server says only "error creating
 * store for stream" (the cause, e.g. a directory it was removing, is in its own log).
 */
export function isStoreCreateFailed(err: unknown): boolean {
  return jsErrorCode(err) === JsCode.StreamCreate && err instanceof Error && /error creating store for stream/i.test(err.message);
}

/** An expected-last-(subject-)sequence write lost to another writer (a KV update's revision too). */
export function isWrongLastSequence(err: unknown): boolean {
  const code = jsErrorCode(err);
  return code === JsCode.WrongLastSequence || code === JsCode.WrongLastSequenceUnknown;
}

/**
 * The server refused to reserve a stream's bytes. nats-server answers with one of two codes,
 * or (on some versions and paths) only says so in words.
 */
export function isStorageRefused(err: unknown): boolean {
  const code = jsErrorCode(err);
  if (code === JsCode.InsufficientResources || code === JsCode.StorageResourcesExceeded) return true;
  return err instanceof Error && /insufficient|resources/i.test(err.message);
}

/**
 * nats.js 3.4 reports "no responders" on a JetStream request as `JetStreamNotEnabled` (a
 * stream electing its leader, a server still recovering its store). The class is not exported
 * from the package's public entry, so it is recognised by name.
 */
function isJetStreamNotEnabled(err: unknown): boolean {
  return err instanceof Error && err.name === "JetStreamNotEnabled";
}

/** No server took the request: nothing can have been stored by it. */
export function isNoResponders(err: unknown): boolean {
  if (err instanceof natsErrors.NoRespondersError) return true;
  if (err instanceof natsErrors.RequestError && err.isNoResponders()) return true;
  return isJetStreamNotEnabled(err);
}

/**
 * A failure worth retrying with the same message id: the broker did not answer in time, nobody
 * answered (an election), the connection dropped under the request, or an earlier send of the
 * same id is still being proposed. Not a closed connection.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof natsErrors.ClosedConnectionError || err instanceof natsErrors.DrainingConnectionError) return false;
  if (err instanceof natsErrors.RequestError && /closed/i.test(err.message)) return false;
  return (
    err instanceof natsErrors.TimeoutError ||
    err instanceof natsErrors.RequestError ||
    err instanceof natsErrors.ConnectionError ||
    isNoResponders(err) ||
    jsErrorCode(err) === JsCode.ClusterNotAvailable ||
    jsErrorCode(err) === JsCode.DuplicateMessageInProcess ||
    isStoreClosed(err)
  );
}

/** Maps a NATS error to a Tidemark error; Tidemark errors pass through unchanged. */
export function mapNatsError(err: unknown, context = "broker request"): Error {
  if (err instanceof TidemarkError) return err;
  if (
    isTransient(err) ||
    err instanceof natsErrors.ClosedConnectionError ||
    err instanceof natsErrors.DrainingConnectionError ||
    (err instanceof Error && /timeout|TIMEOUT|no responders|CONNECTION_REFUSED|ECONNREFUSED|closed/i.test(err.message))
  ) {
    return new BrokerUnavailableError(`${context} failed: the broker did not answer (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (err instanceof JetStreamError || err instanceof JetStreamApiError) {
    return new InternalError(`${context} failed: ${err.message}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
