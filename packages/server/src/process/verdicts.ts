/**
 * How a worker ends a delivery other than by a plain ack: dead-lettering (store first,
 * terminate second), removing a handled redriven copy, and sending verdicts that may find the
 * connection closed.
 */
import type { JsMsg } from "@nats-io/jetstream";
import type { TidemarkEvent } from "@tidemark/shared";
import { encodeDeadLetter, type DeadLetterRecord } from "./dead-letter-record.js";
import { retryDelay } from "./options.js";
import type { WorkerContext } from "./worker-context.js";

/** Shortest delay before a delivery whose dead letter could not be stored comes back. */
export const DEAD_LETTER_RETRY_MS = 1_000;

/** What dead-lettering needs of a worker. */
export type LetterContext = Pick<WorkerContext<unknown>, "runtime" | "js" | "jsm" | "options" | "consumerEpoch">;

/** Where a held message came from. */
export type SourceKind = "events" | "redrive";

export interface Held {
  msg: JsMsg;
  source: SourceKind;
}

/** Sends an ack, nak, term or in-progress ack; after sync.close() the connection is gone and it cannot. */
export function sendVerdict(send: () => void): void {
  try {
    send();
  } catch {
    // Connection closed: the broker redelivers the event after its lease.
  }
}

/**
 * Stores the dead letter, and only once JetStream acknowledged it terminates the delivery.
 * If the store fails the event stays pending and comes back after the retry delay.
 */
export async function storeDeadLetter(
  ctx: LetterContext,
  h: Held,
  event: TidemarkEvent<unknown>,
  attempts: number,
  error: { name: string; message: string },
): Promise<void> {
  const { runtime, js, options } = ctx;
  const record: DeadLetterRecord = {
    v: 1,
    consumer: options.consumer,
    attempts,
    error,
    deadLetteredAt: Date.now(),
    event: plainEvent(event),
  };
  // Dedupe key: a lost term() brings the event back once more; it must not be stored twice.
  const msgID =
    h.source === "events"
      ? `dl:${options.consumer}:${ctx.consumerEpoch}:${h.msg.seq}`
      : `dl:${options.consumer}:redrive:${h.msg.seq}`;
  try {
    await js.publish(runtime.deadLetterSubject(options.consumer), encodeDeadLetter(record), {
      msgID,
      expect: { streamName: runtime.deadLetterStreamName },
    });
  } catch {
    sendVerdict(() => h.msg.nak(Math.max(DEAD_LETTER_RETRY_MS, retryDelay(options.declaration.backoffMs, attempts))));
    return;
  }
  runtime.meters.instruments().deadLetters.add(1, { topic: runtime.options.id, consumer: options.consumer });
  if (h.source === "redrive") await removeRedriven(ctx, h.msg);
  sendVerdict(() => h.msg.term());
}

/** A redriven letter leaves the dead-letter stream once it was handled or dead-lettered again. */
export async function removeRedriven(ctx: LetterContext, msg: JsMsg): Promise<void> {
  try {
    await ctx.jsm.streams.deleteMessage(ctx.runtime.deadLetterStreamName, msg.seq, false);
  } catch {
    // Already gone, or the broker is away: the consumer has moved past it either way.
  }
}

/** The event without extra fields (a ProcessEvent's `attempt`), in a fixed key order. */
function plainEvent(e: TidemarkEvent<unknown>): TidemarkEvent {
  const out: TidemarkEvent = {
    eventId: e.eventId,
    cursor: e.cursor,
    streamSequence: e.streamSequence,
    data: e.data,
    publishedAt: e.publishedAt,
  };
  if (e.tenantId !== undefined) out.tenantId = e.tenantId;
  return out;
}
