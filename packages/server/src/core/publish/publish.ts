/**
 * @internal Sending one event so that one `publish()` call stores at most one event. Every
 * publish carries a JetStream message id — the tenant-scoped idempotency key, or a generated
 * one — and a transient failure (timeout, no responders during an election, a reconnect) is
 * retried with the SAME id, with back-off, until the call's deadline: the broker's dedupe
 * window turns any copy that did arrive into a duplicate of the first.
 */
import {
  assertTenantId,
  backoffCeiling,
  BrokerUnavailableError,
  cursorWithPrefix,
  encodeEnvelope,
  eventIdFor,
  encodeTenant,
  InvalidArgumentError,
  PayloadTooLargeError,
} from "@tidemark/shared";
import { nuid, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import type { PubAck } from "@nats-io/jetstream";
import { EXPECTED_STREAM, MSG_ID, PublishHeaders, type PublishHeaderPrefix } from "./publish-headers.js";
import { LeaderElected, type PublishRequests } from "./publish-request.js";
import { ConnectionDown, ConnectionDropped } from "../connection/connection-drops.js";
import { isNoResponders, isStreamNotFound, isTransient } from "../errors.js";
import type { TopicHandles } from "../runtime.js";
import type { PublishOptions, PublishReceipt } from "../types.js";
import { traceHeaders } from "../../observe/trace.js";
import { recordSince } from "../../observe/meter.js";
import type { MeterRegistry } from "../../observe/meters.js";
import { sleep } from "../sleep.js";

const encoder = new TextEncoder();
const HEADER_LINE = /[\r\n]/;

/** Checks publish options and encodes the envelope; throws before anything is sent. */
export function encodePublish<T>(
  options: PublishOptions<T>,
  maxPayloadBytes: number,
): { bytes: Uint8Array; tenantId?: string; idempotencyKey?: string } {
  if (typeof options !== "object" || options === null) throw new InvalidArgumentError("publish options are required");
  const { data, tenantId, idempotencyKey } = options;
  if (tenantId !== undefined) assertTenantId(tenantId);
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== "string" || idempotencyKey.length === 0 || idempotencyKey.length > 512 || HEADER_LINE.test(idempotencyKey)) {
      throw new InvalidArgumentError("idempotencyKey must be a non-empty string of at most 512 characters without line breaks");
    }
  }
  const body = encodeEnvelope(tenantId === undefined ? { v: 1, ts: Date.now(), d: data } : { v: 1, ts: Date.now(), t: tenantId, d: data });
  const bytes = encoder.encode(body);
  if (bytes.length > maxPayloadBytes) {
    throw new PayloadTooLargeError(
      `event envelope of ${bytes.length} bytes is over the topic's maxPayloadBytes (${maxPayloadBytes}); nothing was stored`,
      { size: bytes.length, limit: maxPayloadBytes },
    );
  }
  return { bytes, tenantId, idempotencyKey };
}

/**
 * The message id of a publish. Keys are scoped to the tenant (JetStream dedupes per stream, and
 * a stream holds every tenant of a topic): `<tenant token>:<key>`. Tenant tokens never hold a
 * `:` (`[A-Za-z0-9-]`, `~` + base64url, or `_` for no tenant), so the first `:` separates them.
 * Generated ids start with `!`, which no tenant token does. At most 345 + 1 + 1,536 bytes: well
 * inside the 4 KiB of header room each stream allows.
 */
export function messageId(tenantId: string | undefined, idempotencyKey: string | undefined): string {
  return idempotencyKey === undefined ? `!${nuid.next()}` : `${encodeTenant(tenantId)}:${idempotencyKey}`;
}

export interface SendContext {
  /** Topic id, for messages. */
  topic: string;
  stream: string;
  /** `publishHeaderPrefix(stream)`, made once. */
  headerPrefix: PublishHeaderPrefix;
  /** Metric attributes of this topic's publishes, made once. */
  attributes: { topic: string };
  /** Where publish durations are recorded. */
  meters: MeterRegistry;
  /** Bound on one attempt. */
  requestTimeoutMs: number;
  /** Bound on the whole call. */
  deadlineMs: number;
  ready(): Promise<TopicHandles>;
  /** What ready() resolved to, when it already did (no timer and no await on the hot path). */
  current(): TopicHandles | undefined;
  /** The stream was deleted under us: the next ready() provisions it again. */
  reprovision(): void;
  /** The publish requests of a connection (its inbox, pending attempts and drops). */
  requests(nc: NatsConnection): PublishRequests;
  /** Is the event stream gone? (false when that cannot be told) */
  streamGone(h: TopicHandles, boundMs: number): Promise<boolean>;
  mapError(err: unknown): Error;
}

export interface Sent {
  ack: PubAck;
  handles: TopicHandles;
}


class DeadlineReached extends Error {}

/** Resolves after `ms` with false, or at once with true when `check` resolves true first. */
function trueWithin(check: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    check.then(
      (yes) => {
        if (!yes) return;
        clearTimeout(timer);
        resolve(true);
      },
      () => undefined, // a failed check tells nothing: the back-off runs out
    );
  });
}

/** Resolves as `work`, or rejects with DeadlineReached after `ms`; `work` is left to finish. */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineReached()), Math.max(0, ms));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * One `publish()` call: what it sends and what its failed attempts have told so far. Every
 * attempt sends the same bytes and header block (the same message id).
 */
class PublishCall {
  readonly deadline: number;
  readonly started = performance.now();
  /** An earlier attempt may have reached the stream. */
  maybeStored = false;
  reprovisioned = false;
  lastError: unknown;
  attempts = 0;
  /** The "is the stream gone?" check in flight, when an attempt met no responders. */
  #check: Promise<boolean> | undefined;

  constructor(
    readonly ctx: SendContext,
    readonly subject: string,
    readonly bytes: Uint8Array,
    readonly headers: MsgHdrs,
  ) {
    this.deadline = Date.now() + ctx.deadlineMs;
  }

  left(): number {
    return this.deadline - Date.now();
  }

  /** One attempt on `handles`: the broker's answer, or ConnectionDropped at a drop. */
  send(handles: TopicHandles): Promise<PubAck> {
    this.attempts++;
    const timeout = Math.max(1, Math.min(this.ctx.requestTimeoutMs, this.left()));
    return this.ctx.requests(handles.nc).send(this.subject, this.bytes, this.headers, timeout, this.ctx.stream);
  }

  done(ack: PubAck, handles: TopicHandles): Sent {
    recordSince(this.ctx.meters.instruments().publishDuration, this.started, this.ctx.attributes);
    return { ack, handles };
  }

  /**
   * What a failed attempt (or a failed `ready()`, `handles` undefined) means: resolves to how
   * long to wait before the next attempt; rejects when the call ends here (a permanent answer).
   */
  async failed(err: unknown, handles: TopicHandles | undefined): Promise<number> {
    // The deadline passing (inside a connect, say) ends the call but is not its reason: the
    // error keeps naming the last real failure (the broker it could not reach).
    if (err instanceof DeadlineReached) return 0;
    this.lastError = err;
    // Never sent: the connection stayed down for connectWaitMs (publish-request.ts), or the
    // first connect was refused (nothing listens there; nats.js tried every server once). The
    // call ends now, saying so, rather than retrying blind until the deadline.
    if (err instanceof ConnectionDown || (!handles && connectionRefused(err))) throw this.notSent(err as Error);
    // A dropped connection: send again at once (held until the connection is back, at most
    // connectWaitMs: publish-request.ts). The dropped attempt may have arrived.
    // The stream elected a new leader while the attempt waited (publish-request.ts): the old
    // leader may have dropped it, or committed it without answering. Send again at once; the
    // same message id makes a committed one a duplicate.
    if (err instanceof ConnectionDropped || err instanceof LeaderElected) {
      this.maybeStored = true;
      return 0;
    }
    const brokerAway = err instanceof BrokerUnavailableError; // from ready(): nothing was sent
    if (!brokerAway && !isTransient(err)) throw permanent(this.ctx, this.ctx.mapError(err), this.maybeStored);
    const noResponders = isNoResponders(err);
    if (handles && !noResponders) this.maybeStored = true;
    // 50 ms doubling to 1.6 s, no jitter: the deadline bounds the call, not a retry count.
    const wait = Math.min(backoffCeiling(this.attempts - 1, { baseMs: 50, maxMs: 1_600 }), Math.max(0, this.left()));
    if (!handles || !noResponders || this.reprovisioned) return wait;
    // No stream answered: maybe another process deleted it (provision again, once). The check
    // runs BESIDE the retries, never in their way: in an election the stream info request can
    // go unanswered (the meta group electing too) for the rest of the deadline, while the
    // stream's new leader takes the next attempt a second later. One check at a time per call.
    this.#check ??= this.ctx.streamGone(handles, this.left()).finally(() => (this.#check = undefined));
    if (!(await trueWithin(this.#check, wait))) return 0; // waited the back-off
    this.reprovisioned = true;
    this.ctx.reprovision();
    return 0;
  }

  /** No attempt (or no further attempt) reached a broker: `err` says why. */
  notSent(err: Error): BrokerUnavailableError {
    const { ctx, maybeStored } = this;
    return new BrokerUnavailableError(
      `publish to topic ${JSON.stringify(ctx.topic)} failed: ${err.message}; ` +
        (maybeStored ? "an earlier attempt went unanswered: the event may have been stored" : "nothing was stored"),
      { cause: err, maybeStored },
    );
  }

  /** The deadline passed without an acknowledgement. */
  unanswered(): BrokerUnavailableError {
    const { ctx, lastError, maybeStored } = this;
    const why = lastError instanceof Error ? ` (${lastError instanceof ConnectionDropped ? "the connection dropped" : lastError.message})` : "";
    return new BrokerUnavailableError(
      `publish to topic ${JSON.stringify(ctx.topic)} failed: no acknowledgement within publishTimeoutMs (${ctx.deadlineMs} ms)${why}; ` +
        (maybeStored ? "the event may have been stored" : "nothing was stored"),
      { cause: lastError, maybeStored },
    );
  }
}

/**
 * Sends `bytes` with `msgID` until it is acknowledged, a permanent error, or the deadline. The
 * first attempt on a provisioned topic is sent without an async frame of its own (it is nearly
 * always the only one); after a failure the call goes on in `retry`.
 */
export function sendWithRetry(ctx: SendContext, subject: string, bytes: Uint8Array, msgID: string): Promise<Sent> {
  const call = new PublishCall(ctx, subject, bytes, publishHeaders(ctx, msgID));
  const handles = ctx.current();
  if (handles === undefined) return retry(call, 0);
  return call.send(handles).then(
    (ack) => call.done(ack, handles),
    (err: unknown) => call.failed(err, handles).then((wait) => retry(call, wait)),
  );
}

/** Attempts after `wait` ms, until one is answered, one fails for good, or the deadline. */
async function retry(call: PublishCall, wait: number): Promise<Sent> {
  for (;;) {
    if (wait > 0) await sleep(wait);
    if (call.left() <= 0) throw call.unanswered();
    let handles: TopicHandles | undefined;
    try {
      handles = call.ctx.current() ?? (await within(call.ctx.ready(), call.left()));
      return call.done(await call.send(handles), handles);
    } catch (err) {
      wait = await call.failed(err, handles);
    }
  }
}

/**
 * The header block: untraced (the common case), the topic's prefix plus the id; traced (read
 * before anything waits: the caller's active span), the trace context plus the same two entries.
 */
function publishHeaders(ctx: SendContext, msgID: string): MsgHdrs {
  const traced = traceHeaders();
  if (traced === undefined) return new PublishHeaders(ctx.headerPrefix, msgID);
  traced.set(EXPECTED_STREAM, ctx.stream);
  traced.set(MSG_ID, msgID);
  return traced;
}

/**
 * A permanent answer ends the call. When an earlier attempt may have stored the event, the
 * failure must still say so, whatever this answer was (seen around a stream leader's election,
 * issue 17): it becomes a BrokerUnavailableError with `maybeStored` and the answer as its cause.
 */
function permanent(ctx: SendContext, err: Error, maybeStored: boolean): Error {
  if (!maybeStored || err instanceof BrokerUnavailableError) return withMaybeStored(err, maybeStored);
  return new BrokerUnavailableError(
    `publish to topic ${JSON.stringify(ctx.topic)} failed: the broker answered "${err.message}" after an earlier attempt went unanswered; the event may have been stored`,
    { cause: err, maybeStored: true },
  );
}

function withMaybeStored(err: Error, maybeStored: boolean): Error {
  if (!(err instanceof BrokerUnavailableError) || err.maybeStored === maybeStored) return err;
  return new BrokerUnavailableError(err.message, { cause: err.cause, maybeStored });
}

/** The receipt of an acknowledged publish; `prefix` is the incarnation's cursor prefix. */
export function receiptOf(ack: PubAck, incarnation: string, prefix: string, idempotencyKey: string | undefined): PublishReceipt {
  return {
    eventId: eventIdFor(incarnation, ack.seq),
    cursor: cursorWithPrefix(prefix, ack.seq),
    streamSequence: ack.seq,
    // A generated id is unique to this call: a duplicate answer is a retry meeting this call's
    // own earlier attempt, i.e. this call's event.
    duplicate: idempotencyKey !== undefined && ack.duplicate,
  };
}

/**
 * A connect that found nothing listening: nats.js's `ConnectionError("connection refused")`
 * (transport-node wraps ECONNREFUSED so), somewhere in the cause chain.
 */
export function connectionRefused(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === "ECONNREFUSED") return true;
    if (e.name === "ConnectionError" && e.message === "connection refused") return true;
  }
  return false;
}

/** True when the stream is confirmed missing; false when it exists or cannot be told in time. */
export async function confirmStreamGone(lookup: () => Promise<unknown>, boundMs: number): Promise<boolean> {
  try {
    return (await within(lookup(), boundMs)) === undefined;
  } catch (err) {
    return isStreamNotFound(err);
  }
}
