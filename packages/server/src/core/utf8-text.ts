/**
 * @internal UTF-8 text of a stored payload, exactly as `new TextDecoder().decode(bytes)` gives
 * it, for the per-event decode, through `Buffer`'s undocumented `utf8Slice` (V8's UTF-8 decoder,
 * no TextDecoder call) where it agrees. On Node 20.20 both take ~0.2 µs for a ~70–85-byte envelope
 * (docs/core.md, "Payload text"). Undocumented means unpromised: it is used
 * only after a self-check on first use shows it equals the TextDecoder on samples that cover
 * multi-byte, invalid and truncated sequences; elsewhere (Deno, browsers, a Node that changed)
 * the shared TextDecoder decodes.
 */

/** `Buffer.prototype.utf8Slice`: reads `[start, end)` of any Uint8Array as UTF-8 (U+FFFD for invalid bytes). */
type Utf8Slice = (this: Uint8Array, start: number, end: number) => string;

/** A UTF-8 `TextDecoder` (the server's lib has no DOM type for it). */
interface Decoder {
  decode(bytes: Uint8Array): string;
}

export interface Utf8TextOptions {
  /**
   * The `Buffer` constructor whose `prototype.utf8Slice` may decode; undefined: TextDecoder only.
   * @default globalThis.Buffer (Node; undefined on runtimes without it)
   */
  buffer?: { prototype: object } | undefined;
  /**
   * The decoder that defines the result (and decodes when utf8Slice is not used).
   * @default new TextDecoder() (utf-8, non-fatal, BOM stripped)
   */
  decoder?: Decoder;
}

/** Byte samples the fast path must decode exactly as the TextDecoder does. */
const SAMPLES: readonly (readonly number[])[] = [
  [],
  [0x7b, 0x22, 0x64, 0x22, 0x3a, 0x31, 0x7d], // {"d":1}
  [0xef, 0xbb, 0xbf, 0x61], // BOM + "a": the BOM is not text
  [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], // only the first BOM goes
  [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], // é € 😀
  [0x61, 0xff, 0x62, 0xc3, 0x28, 0xe2, 0x82, 0x61], // invalid lead, bad continuation, truncated
  [0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xc0, 0xaf], // surrogate, > U+10FFFF, overlong
  [0x61, 0xf0, 0x9f, 0x98], // truncated at the end
];

/** True when `slice` decodes every sample, at an offset inside a larger buffer, as `decoder` does. */
function agrees(slice: Utf8Slice, decoder: Decoder): boolean {
  try {
    for (const sample of SAMPLES) {
      const backing = new Uint8Array(sample.length + 3);
      backing.set(sample, 2);
      const bytes = backing.subarray(2, 2 + sample.length);
      if (decodeWith(slice, bytes) !== decoder.decode(bytes)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

function decodeWith(slice: Utf8Slice, bytes: Uint8Array): string {
  // TextDecoder's default (ignoreBOM false) drops one leading BOM; utf8Slice keeps it.
  const start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return slice.call(bytes, start, bytes.length);
}

/** Decodes UTF-8 bytes to the string `TextDecoder` gives. */
export type Utf8Text = (bytes: Uint8Array) => string;

/**
 * A decoder of payload bytes. The fast path is chosen on the first call (no work at import or
 * construction), once per returned function.
 *
 * @example
 * const text = utf8Text();
 * text(new Uint8Array([0xc3, 0xa9])); // "é"
 */
export function utf8Text(options: Utf8TextOptions = {}): Utf8Text {
  const decoder = options.decoder ?? new TextDecoder();
  const buffer = "buffer" in options ? options.buffer : (globalThis as { Buffer?: { prototype: object } }).Buffer;
  const viaDecoder: Utf8Text = (bytes) => decoder.decode(bytes);
  let decode: Utf8Text = (bytes) => {
    const candidate = (buffer?.prototype as { utf8Slice?: unknown } | undefined)?.utf8Slice;
    // Called on the Uint8Array itself: Node's binding takes any ArrayBufferView, which saves the
    // Buffer object `Buffer.from(u8.buffer, ...)` would allocate per event (the self-check
    // proves it on views at an offset).
    const slice = typeof candidate === "function" ? (candidate as Utf8Slice) : undefined;
    decode = slice !== undefined && agrees(slice, decoder) ? (b) => decodeWith(slice, b) : viaDecoder;
    return decode(bytes);
  };
  return (bytes) => decode(bytes);
}
