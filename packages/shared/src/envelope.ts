/**
 * The event envelope: the JSON body stored in JetStream for each event, and the event shape
 * readers get back. `maxPayloadBytes` counts the envelope's UTF-8 bytes.
 */
import type { Cursor } from "./cursor.js";
import { InvalidArgumentError } from "./errors.js";

/** One event as readers see it. */
export interface TidemarkEvent<T = unknown> {
  /** Stable id of the event, derived from the topic incarnation and stream sequence. */
  eventId: string;
  /** Position of this event; resume after it with `after: cursor`. */
  cursor: Cursor;
  streamSequence: number;
  tenantId?: string;
  data: T;
  /** Milliseconds since the epoch, taken by the publisher. */
  publishedAt: number;
}

/** The stored body. Short keys: the envelope counts against the payload limit. */
export interface Envelope {
  v: 1;
  /** publishedAt, ms since the epoch */
  ts: number;
  /** tenant id, absent for topic-wide events */
  t?: string;
  d: unknown;
}

/** Serialises an envelope; throws {@link InvalidArgumentError} when `data` is not JSON. */
export function encodeEnvelope(envelope: Envelope): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(envelope, rejectNonJson);
  } catch (cause) {
    throw new InvalidArgumentError(`event data is not JSON-serializable: ${(cause as Error).message}`, { cause });
  }
  if (text === undefined) throw new InvalidArgumentError("event data is not JSON-serializable");
  return text;
}

/** Parses a stored body; throws {@link InvalidArgumentError} when it is not an envelope. */
export function decodeEnvelope(text: string): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new InvalidArgumentError("stored message is not a Tidemark envelope", { cause });
  }
  const e = value as Envelope;
  if (typeof value !== "object" || value === null || e.v !== 1 || typeof e.ts !== "number" || !("d" in e)) {
    throw new InvalidArgumentError("stored message is not a Tidemark envelope");
  }
  return e;
}

/** Event id for a sequence of a topic incarnation; the same for an event and its duplicates. */
export function eventIdFor(incarnation: string, sequence: number): string {
  return `${incarnation}-${sequence}`;
}

// JSON.stringify silently drops or mangles these; a publish must refuse them instead of
// storing something other than what the caller passed.
function rejectNonJson(this: unknown, key: string, value: unknown): unknown {
  const t = typeof value;
  if (t === "bigint" || t === "function" || t === "symbol") {
    throw new TypeError(`${t} at ${JSON.stringify(key)}`);
  }
  if (t === "undefined" && key === "d") throw new TypeError("data is undefined");
  if (t === "number" && !Number.isFinite(value as number)) throw new TypeError(`non-finite number at ${JSON.stringify(key)}`);
  return value;
}
