/**
 * @internal Sending one event so that one `publish()` call stores at most one event. Every
 * publish carries a JetStream message id — the tenant-scoped idempotency key, or a generated
 * one — and a transient failure (timeout, no responders during an election, a reconnect) is
 * retried with the SAME id, with back-off, until the call's deadline: the broker's dedupe
 * window turns any copy that did arrive into a duplicate of the first.
 */
import {
  assertTenantId,
  BrokerUnavailableError,
  cursorWithPrefix,
  encodeEnvelope,
  eventIdFor,
  encodeTenant,
  InvalidArgumentError,
  PayloadTooLargeError,
} from "@tidemark/shared";
import { nuid } from "@nats-io/nats-core";
import type { JetStreamClient, JetStreamPublishOptions, PubAck } from "@nats-io/jetstream";
import { PublishHeaders, type PublishHeaderPrefix } from "./publish-headers.js";
import { ConnectionDropped, type ConnectionDrops } from "./connection-drops.js";
import { isNoResponders, isStreamNotFound, isTransient } from "./errors.js";
import type { TopicHandles } from "./runtime.js";
import type { PublishOptions, PublishReceipt } from "./types.js";
import { traceHeaders } from "../observe/trace.js";
import { instruments, recordSince } from "../observe/meter.js";

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
  /** Bound on one attempt. */
  requestTimeoutMs: number;
  /** Bound on the whole call. */
  deadlineMs: number;
  ready(): Promise<TopicHandles>;
  /** What ready() resolved to, when it already did (no timer and no await on the hot path). */
  current(): TopicHandles | undefined;
  /** The stream was deleted under us: the next ready() provisions it again. */
  reprovision(): void;
  /** Drops of the connection: an attempt in flight on it will get no answer. */
  drops: Pick<ConnectionDrops, "watch" | "forget">;
  /** Is the event stream gone? (false when that cannot be told) */
  streamGone(h: TopicHandles, boundMs: number): Promise<boolean>;
  mapError(err: unknown): Error;
}

export interface Sent {
  ack: PubAck;
  handles: TopicHandles;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class DeadlineReached extends Error {}

/** Resolves as `work`, or rejects with DeadlineReached after `ms`; `work` is left to finish. */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineReached()), Math.max(0, ms));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** One attempt: the broker's answer, or ConnectionDropped when the connection drops first. */
function attempt(js: JetStreamClient, subject: string, bytes: Uint8Array, options: Partial<JetStreamPublishOptions>, drops: SendContext["drops"]): Promise<PubAck> {
  let onDrop!: (reason: ConnectionDropped) => void;
  const answer = new Promise<PubAck>((resolve, reject) => {
    onDrop = reject;
    // Watched only while the attempt runs; an abandoned attempt's late answer lands on a
    // settled promise.
    js.publish(subject, bytes, options).then(
      (ack) => {
        drops.forget(onDrop);
        resolve(ack);
      },
      (err: unknown) => {
        drops.forget(onDrop);
        reject(err);
      },
    );
  });
  drops.watch(onDrop);
  return answer;
}

/** The bound on one attempt. */
const attemptTimeout = (ctx: SendContext, deadline: number) => Math.max(1, Math.min(ctx.requestTimeoutMs, deadline - Date.now()));

/**
 * Sends `bytes` with `msgID` until it is acknowledged, a permanent error, or the deadline. The
 * first attempt on a provisioned topic is sent without an async frame of its own (it is nearly
 * always the only one); a failure goes on in `retry`.
 */
export function sendWithRetry(ctx: SendContext, subject: string, bytes: Uint8Array, msgID: string): Promise<Sent> {
  const deadline = Date.now() + ctx.deadlineMs;
  const traced = traceHeaders(); // read before anything waits: the caller's active span
  // Untraced (the common case): the block is the topic's prefix plus the id; traced: nats.js
  // adds the id and the expected stream to the trace headers.
  const options: Partial<JetStreamPublishOptions> = traced
    ? { msgID, headers: traced, expect: { streamName: ctx.stream } }
    : { headers: new PublishHeaders(ctx.headerPrefix, msgID) };
  const started = performance.now();
  const handles = ctx.current();
  if (handles === undefined) return retry(ctx, subject, bytes, options, deadline, started, undefined);
  options.timeout = attemptTimeout(ctx, deadline);
  return attempt(handles.js, subject, bytes, options, ctx.drops).then(
    (ack) => {
      recordSince(instruments().publishDuration, started, ctx.attributes);
      return { ack, handles };
    },
    (err: unknown) => retry(ctx, subject, bytes, options, deadline, started, { err, handles }),
  );
}

/** The retry loop; `first` is the failure of a first attempt already made. */
async function retry(
  ctx: SendContext,
  subject: string,
  bytes: Uint8Array,
  options: Partial<JetStreamPublishOptions>,
  deadline: number,
  started: number,
  first: { err: unknown; handles: TopicHandles } | undefined,
): Promise<Sent> {
  let maybeStored = false;
  let reprovisioned = false;
  let lastError: unknown;
  for (let n = 0, left = deadline - Date.now(); first !== undefined || left > 0; n++, left = deadline - Date.now()) {
    let handles: TopicHandles | undefined;
    try {
      if (first !== undefined) {
        // The first attempt's failure is handled like any other attempt's, below.
        handles = first.handles;
        const failed = first.err;
        first = undefined;
        throw failed;
      }
      handles = ctx.current() ?? (await within(ctx.ready(), left));
      options.timeout = attemptTimeout(ctx, deadline);
      const ack = await attempt(handles.js, subject, bytes, options, ctx.drops);
      recordSince(instruments().publishDuration, started, ctx.attributes);
      return { ack, handles };
    } catch (err) {
      lastError = err;
      if (err instanceof DeadlineReached) break;
      const brokerAway = err instanceof BrokerUnavailableError; // from ready(): nothing was sent
      // A dropped connection: send again at once (nats.js holds it until it has reconnected).
      if (err instanceof ConnectionDropped) {
        maybeStored = true;
        continue;
      }
      if (!brokerAway && !isTransient(err)) throw permanent(ctx, ctx.mapError(err), maybeStored);
      if (handles && !isNoResponders(err)) maybeStored = true;
      // No stream answered: maybe another process deleted it. Provision again, once.
      if (handles && isNoResponders(err) && !reprovisioned && (await ctx.streamGone(handles, deadline - Date.now()))) {
        reprovisioned = true;
        ctx.reprovision();
        continue;
      }
    }
    await sleep(Math.min(50 * 2 ** Math.min(n, 5), Math.max(0, deadline - Date.now())));
  }
  const why = lastError instanceof Error && !(lastError instanceof DeadlineReached) ? ` (${lastError instanceof ConnectionDropped ? "the connection dropped" : lastError.message})` : "";
  throw new BrokerUnavailableError(
    `publish to topic ${JSON.stringify(ctx.topic)} failed: no acknowledgement within publishTimeoutMs (${ctx.deadlineMs} ms)${why}; ` +
      (maybeStored ? "the event may have been stored" : "nothing was stored"),
    { cause: lastError, maybeStored },
  );
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

/** True when the stream is confirmed missing; false when it exists or cannot be told in time. */
export async function confirmStreamGone(lookup: () => Promise<unknown>, boundMs: number): Promise<boolean> {
  try {
    return (await within(lookup(), boundMs)) === undefined;
  } catch (err) {
    return isStreamNotFound(err);
  }
}
