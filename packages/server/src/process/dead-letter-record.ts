/**
 * The dead-letter record: the JSON body stored in a topic's dead-letter stream. It carries the
 * event itself, not only its sequence, because retention may remove the original. A redriven
 * letter travels with the same body on the consumer's redrive subject.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import type { DeadLetter } from "../core/types.js";

/**
 * Largest error name and message kept, in bytes once JSON-encoded (an escaped control
 * character takes 6): with the event, a letter must fit the stream's message limit,
 * `maxPayloadBytes` + 4 KiB.
 */
export const MAX_ERROR_NAME_BYTES = 200;
export const MAX_ERROR_MESSAGE_BYTES = 2_000;

/** Stored body of a dead letter (and of a redriven one). */
export interface DeadLetterRecord {
  v: 1;
  consumer: string;
  attempts: number;
  error: { name: string; message: string };
  deadLetteredAt: number;
  event: TidemarkEvent;
}

/** Name and message of anything a handler threw: an Error, an error-like object, or any value. */
export function describeError(err: unknown): { name: string; message: string } {
  let name = "NonError";
  let message: string;
  if (err instanceof Error) {
    name = err.name || "Error";
    message = err.message;
  } else if (typeof err === "object" && err !== null && typeof (err as { message?: unknown }).message === "string") {
    // Error-like values from another realm, or plain { name, message } objects.
    const e = err as { name?: unknown; message: string };
    if (typeof e.name === "string" && e.name !== "") name = e.name;
    message = e.message;
  } else {
    message = stringify(err);
  }
  return { name: fit(name, MAX_ERROR_NAME_BYTES), message: fit(message, MAX_ERROR_MESSAGE_BYTES) };
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

const encoder = new TextEncoder();
const encodedBytes = (text: string) => encoder.encode(JSON.stringify(text)).length - 2;

/** `text`, cut (with an ellipsis) until its JSON encoding takes at most `maxBytes`. */
function fit(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 6 || encodedBytes(text) <= maxBytes) return text;
  const cutAt = (n: number) => {
    // Never split a surrogate pair (it would become a lone, escaped surrogate).
    const code = text.charCodeAt(n - 1);
    return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n)}…`;
  };
  let cut = Math.min(text.length, maxBytes);
  let out = cutAt(cut);
  while (encodedBytes(out) > maxBytes) {
    cut = Math.floor(cut * 0.8);
    out = cutAt(cut);
  }
  return out;
}

/** Serialises a record (the event's data is JSON already: it came from a JSON envelope). */
export function encodeDeadLetter(record: DeadLetterRecord): string {
  return JSON.stringify(record);
}

/** Parses a stored record; `undefined` when the body is not one. */
export function decodeDeadLetterRecord(text: string): DeadLetterRecord | undefined {
  try {
    const r = JSON.parse(text) as DeadLetterRecord;
    if (
      typeof r !== "object" || r === null || r.v !== 1 || typeof r.consumer !== "string" ||
      typeof r.event !== "object" || r.event === null || typeof r.event.streamSequence !== "number"
    ) {
      return undefined;
    }
    return r;
  } catch {
    return undefined;
  }
}

/** The public shape of a stored record at `sequence` of the dead-letter stream. */
export function toDeadLetter<T>(record: DeadLetterRecord, sequence: number): DeadLetter<T> {
  const e = record.event;
  const event: TidemarkEvent<T> = {
    eventId: e.eventId,
    cursor: e.cursor as Cursor,
    streamSequence: e.streamSequence,
    data: e.data as T,
    publishedAt: e.publishedAt,
  };
  if (e.tenantId !== undefined) event.tenantId = e.tenantId;
  return {
    event,
    consumer: record.consumer,
    attempts: record.attempts,
    error: { name: record.error.name, message: record.error.message },
    deadLetteredAt: record.deadLetteredAt,
    sequence,
  };
}
