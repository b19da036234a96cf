/**
 * The event envelope: the JSON body stored in JetStream for each event, and the event shape
 * readers get back. `maxPayloadBytes` counts the envelope's UTF-8 bytes.
 */
import type { Cursor } from "./cursor.js";
import { InvalidArgumentError } from "./errors.js";
import { assertJsonValue } from "./json-value.js";

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

/**
 * Serialises an envelope; throws {@link InvalidArgumentError} naming the path when `data` would
 * not read back as it was passed (see `assertJsonValue`).
 */
export function encodeEnvelope(envelope: Envelope): string {
  assertJsonValue(envelope.d);
  // The bytes of JSON.stringify(envelope) (keys in this order), without its walk of the wrapper:
  // `d` is checked JSON (never undefined), `ts` a number, `t` a string.
  const t = envelope.t === undefined ? "" : `,"t":${JSON.stringify(envelope.t)}`;
  return `{"v":1,"ts":${JSON.stringify(envelope.ts)}${t},"d":${JSON.stringify(envelope.d)}}`;
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
