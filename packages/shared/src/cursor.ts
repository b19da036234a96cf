/**
 * The `s6t.` cursor codec. A cursor names its namespace, topic, the stream's incarnation and a
 * stream sequence. Callers treat cursors as opaque; only Tidemark decodes them.
 */
import { InvalidCursorError } from "./errors.js";
import { fromBase64Url, toBase64Url } from "./base64url.js";

declare const cursorBrand: unique symbol;
/** An opaque position in a topic. Never parse or compare cursors: use `cursorSequence()`. */
export type Cursor = string & { readonly [cursorBrand]: true };

/** The decoded parts of a cursor. */
export interface CursorParts {
  namespace: string;
  topic: string;
  /** The stream's incarnation; `""` matches any (a cursor made before the topic's first use). */
  incarnation: string;
  sequence: number;
}

const PREFIX = "s6t.";
const VERSION = 1;
/** Longest cursor accepted by {@link decodeCursor}; bounds work on hostile input. */
export const MAX_CURSOR_LENGTH = 1024;

/**
 * The part of a cursor that names the position's topic: `s6t.<base64url([1, ns, topic, inc])>.`.
 * A reader builds it once per topic and appends base-36 sequences, which keeps cursor encoding
 * off the hot path of replay and fan-out.
 */
export function cursorPrefix(parts: Omit<CursorParts, "sequence">): string {
  return PREFIX + toBase64Url(JSON.stringify([VERSION, parts.namespace, parts.topic, parts.incarnation])) + ".";
}

/** Encodes cursor parts. */
export function encodeCursor(parts: CursorParts): Cursor {
  return cursorWithPrefix(cursorPrefix(parts), parts.sequence);
}

/** @internal Appends a sequence to a prefix made by {@link cursorPrefix}. */
export function cursorWithPrefix(prefix: string, sequence: number): Cursor {
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw new InvalidCursorError(`cursor sequence must be a non-negative safe integer, got ${sequence}`);
  }
  return (prefix + sequence.toString(36)) as Cursor;
}

/** Decodes a cursor; throws {@link InvalidCursorError} for anything that is not one. */
export function decodeCursor(value: unknown): CursorParts {
  if (typeof value !== "string") throw new InvalidCursorError(`a cursor is a string, got ${typeof value}`);
  if (value.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError("cursor is too long");
  if (!value.startsWith(PREFIX)) throw new InvalidCursorError("not a Tidemark cursor (expected the s6t. prefix)");
  const dot = value.lastIndexOf(".");
  const seqText = value.slice(dot + 1);
  if (dot < PREFIX.length || !/^(0|[1-9a-z][0-9a-z]*)$/.test(seqText)) {
    throw new InvalidCursorError("malformed cursor sequence");
  }
  const sequence = Number.parseInt(seqText, 36);
  if (!Number.isSafeInteger(sequence)) throw new InvalidCursorError("cursor sequence out of range");
  const text = fromBase64Url(value.slice(PREFIX.length, dot));
  if (text === undefined) throw new InvalidCursorError("malformed cursor body");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new InvalidCursorError("malformed cursor body", { cause });
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== VERSION) {
    throw new InvalidCursorError("unsupported cursor version");
  }
  const [, namespace, topic, incarnation] = parsed as unknown[];
  if (typeof namespace !== "string" || typeof topic !== "string" || typeof incarnation !== "string") {
    throw new InvalidCursorError("malformed cursor fields");
  }
  return { namespace, topic, incarnation, sequence };
}

/** True when `value` is a well-formed cursor (of any topic). */
export function isCursor(value: unknown): value is Cursor {
  try {
    decodeCursor(value);
    return true;
  } catch {
    return false;
  }
}
