/**
 * The dead-letter record: the JSON body stored in a topic's dead-letter stream. It carries the
 * event itself, not only its sequence, because retention may remove the original. A redriven
 * letter travels with the same body on the consumer's redrive subject.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import type { DeadLetter } from "../core/types.js";

/** Longest error name and message kept, in characters (a letter must fit the stream's message limit). */
export const MAX_ERROR_NAME = 200;
export const MAX_ERROR_MESSAGE = 2_000;

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
  return { name: truncate(name, MAX_ERROR_NAME), message: truncate(message, MAX_ERROR_MESSAGE) };
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

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
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
