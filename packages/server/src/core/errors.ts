/** NATS failures become Tidemark errors here, in one place (like nats.js's parseJsResponse). */
import { BrokerUnavailableError, TidemarkError } from "@tidemark/shared";
import { errors as natsErrors } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError } from "@nats-io/jetstream";

/** JetStream API error codes Tidemark reacts to. */
export const JsCode = {
  StreamNotFound: 10059,
  ConsumerNotFound: 10014,
  NoMessageFound: 10037,
  StreamNameInUse: 10058,
  InsufficientResources: 10023,
  StorageResourcesExceeded: 10047,
  MaxBytesRequired: 10113,
} as const;

/** The JetStream API error code of `err`, when it is one. */
export function jsErrorCode(err: unknown): number | undefined {
  if (err instanceof JetStreamApiError) return err.apiError().err_code;
  return undefined;
}

/** Maps a NATS error to a Tidemark error; Tidemark errors pass through unchanged. */
export function mapNatsError(err: unknown, context = "broker request"): Error {
  if (err instanceof TidemarkError) return err;
  if (
    err instanceof natsErrors.TimeoutError ||
    err instanceof natsErrors.NoRespondersError ||
    err instanceof natsErrors.ClosedConnectionError ||
    err instanceof natsErrors.ConnectionError ||
    err instanceof natsErrors.RequestError ||
    (err instanceof Error && /timeout|TIMEOUT|no responders|CONNECTION_REFUSED|ECONNREFUSED|closed/i.test(err.message))
  ) {
    return new BrokerUnavailableError(`${context} failed: the broker did not answer (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (err instanceof JetStreamError || err instanceof JetStreamApiError) {
    return new TidemarkError("INTERNAL", `${context} failed: ${err.message}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
