/**
 * What an event costs in the heap, for the byte bounds of the hubs' rings and the topic feeds'
 * backlog. The JSON length is not it: `JSON.parse` turns `[{},{},…]` into 64 bytes of heap per 3
 * characters, and every object key seen for the first time costs a hidden class (map,
 * descriptors, the key string, an enum cache) of about 180 bytes. The estimate walks the
 * decoded value once and charges each node at least what V8 (64-bit, no pointer compression:
 * Node 20, 22, 24) allocates for it, so no payload shape holds more than its estimate; it is
 * never below the JSON length either (the frames made from an event are that long). Measured
 * figures: docs/reliability.md.
 */
import { InvalidArgumentError, type TidemarkEvent } from "@tidemark/shared";

/**
 * Heap the event object itself holds beside its data (the envelope object, `eventId`, `cursor`,
 * `tenantId`, a heap `publishedAt`: ~190 bytes measured) plus the hub's own per-event
 * bookkeeping (a ring or backlog slot and its size, the frame cache's weak entry).
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
/**
 * A key the event's objects had not used in that place: a new map, its descriptors, the key
 * string (~120 bytes), and the enum cache V8 adds to the map when anything lists the object's
 * keys (~60 bytes; the walk below does, with Object.keys).
 */
const NEW_KEY = 192;
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

/** A node of a key trie: objects with the same key sequence share V8's maps. */
type KeyTrie = Map<string, KeyTrie>;

/**
 * The key sequences (object shapes) the estimate has charged maps for, shared by the events of
 * one hub registry. V8 keeps one map per key sequence for the whole process, so a shape every
 * event repeats (`{ itemId, kind, at }`) is charged once, not per event. Bounded: once
 * `maxKeys` keys are known, new shapes are charged in every event that has them (once per
 * event). What it can under-count in all is the maps of known shapes that V8 has collected
 * since and an event re-creates: at most `maxKeys` x 192 bytes (192 KiB) per registry.
 */
export class KnownShapes {
  readonly root: KeyTrie = new Map();
  keys = 0;
  /** @param maxKeys Trie nodes kept (a Map each: about 430 bytes measured). @default 1024 */
  constructor(readonly maxKeys = 1024) {}
}

/**
 * Heap bytes `value` (a decoded JSON value) holds, charged per node as described above. An
 * explicit stack, not recursion: JSON.parse accepts nesting deeper than the call stack. With
 * `known`, key sequences charged before (by earlier events) are not charged again.
 *
 * @example
 * estimateValueHeap(JSON.parse("[{},{}]")); // 208 = an array of two slots + two objects
 */
export function estimateValueHeap(value: unknown, known: KnownShapes = new KnownShapes(0)): number {
  let total = 0;
  // Shapes new to this value once `known` is full: each charged once per value.
  let local: KeyTrie | undefined;
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
      } else if (known.keys < known.maxKeys) {
        let node: KeyTrie | undefined = known.root;
        for (const k of keys) {
          let next: KeyTrie | undefined = node?.get(k);
          if (!next) {
            total += NEW_KEY + 2 * k.length;
            // Filled up mid-object: the rest of its keys are charged (over, never under).
            if (node && known.keys < known.maxKeys) {
              node.set(k, (next = new Map()));
              known.keys++;
            }
          }
          node = next;
        }
      } else {
        let node: KeyTrie | undefined = known.root;
        let mine = (local ??= new Map());
        for (const k of keys) {
          node = node?.get(k);
          let next = mine.get(k);
          if (!next) {
            mine.set(k, (next = new Map()));
            if (!node) total += NEW_KEY + 2 * k.length;
          }
          mine = next;
        }
      }
      for (const k of keys) stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return total;
}

/**
 * An event's estimated size: the heap estimate of its data plus {@link EVENT_OVERHEAD}, and
 * never less than the data's JSON length plus that overhead.
 */
export function estimateEventSize(event: TidemarkEvent, known?: KnownShapes): number {
  const heap = estimateValueHeap(event.data, known);
  let json: number;
  try {
    json = JSON.stringify(event.data)?.length ?? 0;
  } catch {
    // Nesting deeper than JSON.stringify's stack (a payload no JS publisher made): the walk counts.
    json = 0;
  }
  return Math.max(heap, json) + EVENT_OVERHEAD;
}

/** The default `sizeOf` of a hub registry: {@link estimateEventSize} with shapes known across its events. */
export function eventSizer(known = new KnownShapes()): (event: TidemarkEvent) => number {
  return (event) => estimateEventSize(event, known);
}

/**
 * `sizeOf` computed once for an event that several places take in turn: the topic feed's
 * backlog, then the ring of the hub it hands the event to, at once. Only the last event's size is
 * kept: a WeakMap of every event cost a set per event and work for every GC, in a feed that reads
 * every event of its topic. (An event a resuming hub later takes from the backlog is sized again.)
 * A size that is not a finite number >= 0 (a custom `sizeOf`'s bug) would switch the byte bounds
 * off: it throws `InvalidArgumentError`, and the hubs reading that event end with it (their
 * subscribers get the error).
 */
export function sizeOnce(sizeOf: (event: TidemarkEvent) => number): (event: TidemarkEvent) => number {
  let last: TidemarkEvent | undefined;
  let lastSize = 0;
  return (event) => {
    if (event === last) return lastSize;
    const size = sizeOf(event);
    if (typeof size !== "number" || !Number.isFinite(size) || size < 0) {
      throw new InvalidArgumentError(`hub option sizeOf returned ${String(size)}, not a finite number >= 0`);
    }
    last = event;
    lastSize = size;
    return size;
  };
}
