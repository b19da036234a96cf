/**
 * What an event costs in the heap, for the byte bounds of the hubs' rings and the topic feeds'
 * backlog. The JSON length is not it: `JSON.parse` turns `[{},{},…]` into 64 bytes of heap per 3
 * characters, and every object key seen for the first time costs a hidden class (map,
 * descriptors, the key string) of about 120 bytes. The estimate walks the decoded value once and
 * charges each node at least what V8 (64-bit, no pointer compression: Node 20, 22, 24) allocates
 * for it, so no payload shape holds more than its estimate; it is never below the JSON length
 * either (the frames made from an event are that long). Measured figures: docs/reliability.md.
 */
import type { TidemarkEvent } from "@tidemark/shared";

/**
 * Heap the event object itself holds beside its data (the envelope object, `eventId`, `cursor`,
 * `tenantId`, a heap `publishedAt`: ~190 bytes measured) plus the hub's own per-event
 * bookkeeping (a ring or backlog slot, the size memo's and the frame cache's weak entries).
 */
export const EVENT_OVERHEAD = 320;

/** A JS object: header (map, properties, elements) and the slack JSON.parse gives it (56 measured). */
const OBJECT = 64;
/** A JS array with its elements store header (56 measured for one element). */
const ARRAY = 64;
/** One pointer-sized slot: an array element or an object property. */
const SLOT = 8;
/** A string's header and its string-table slot when JSON.parse internalises it. */
const STRING = 32;
/** A number that is not a small integer is a separate HeapNumber. */
const HEAP_NUMBER = 16;
/** A key the event's objects had not used in that place: a new map, its descriptors, the key string. */
const NEW_KEY = 128;
/**
 * From this many keys, JSON.parse builds a dictionary-mode object: no shared map, ~48 bytes
 * per entry plus the key strings (charged as if every key were new to the process).
 */
const DICTIONARY_KEYS = 128;
const DICTIONARY_ENTRY = 104;

const NOT_LATIN1 = /[\u0100-\uffff]/;

function stringCost(s: string): number {
  // Two-byte strings take two bytes a character; a test, not a count (it stops at the first).
  const bytes = NOT_LATIN1.test(s) ? 2 * s.length : s.length;
  return STRING + ((bytes + 7) & ~7);
}

function numberCost(n: number): number {
  return Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 ? 0 : HEAP_NUMBER;
}

/** A node of the key trie of one walk: objects with the same key sequence share V8's maps. */
type KeyTrie = Map<string, KeyTrie>;

/**
 * Heap bytes `value` (a decoded JSON value) holds, charged per node as described above. An
 * explicit stack, not recursion: JSON.parse accepts nesting deeper than the call stack.
 *
 * @example
 * estimateValueHeap(JSON.parse("[{},{}]")); // 208 = an array of two slots + two objects
 */
export function estimateValueHeap(value: unknown): number {
  let total = 0;
  const root: KeyTrie = new Map();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") total += stringCost(v);
    else if (typeof v === "number") total += numberCost(v);
    else if (Array.isArray(v)) {
      total += ARRAY + SLOT * v.length;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      total += OBJECT + SLOT * keys.length;
      if (keys.length >= DICTIONARY_KEYS) {
        for (const k of keys) total += DICTIONARY_ENTRY + k.length;
      } else {
        // A key sequence first seen in this value makes maps; one seen before shares them.
        let node = root;
        for (const k of keys) {
          let next = node.get(k);
          if (!next) {
            node.set(k, (next = new Map()));
            total += NEW_KEY + 2 * k.length;
          }
          node = next;
        }
      }
      for (const k of keys) stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return total;
}

/**
 * The default `sizeOf` of the hub options: the heap estimate of the event's data plus
 * {@link EVENT_OVERHEAD}, and never less than the data's JSON length plus that overhead.
 */
export function estimateEventSize(event: TidemarkEvent): number {
  const heap = estimateValueHeap(event.data);
  let json: number;
  try {
    json = JSON.stringify(event.data)?.length ?? 0;
  } catch {
    // Nesting deeper than JSON.stringify's stack (a payload no JS publisher made): the walk counts.
    json = 0;
  }
  return Math.max(heap, json) + EVENT_OVERHEAD;
}

/**
 * `sizeOf` computed once per event, however many places hold it (the topic feed's backlog and
 * a hub's ring share the event object). Weak: an event no window holds is forgotten with it.
 */
export function sizeOnce(sizeOf: (event: TidemarkEvent) => number): (event: TidemarkEvent) => number {
  const sizes = new WeakMap<object, number>();
  return (event) => {
    let size = sizes.get(event);
    if (size === undefined) sizes.set(event, (size = sizeOf(event)));
    return size;
  };
}
