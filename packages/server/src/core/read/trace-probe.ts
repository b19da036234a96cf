/**
 * @internal The headers of a delivered message, only when they may carry a trace context.
 * nats.js turns a header block into a map on the first read of `headers`; every stored event
 * has one (its `Nats-Msg-Id`), and decoding it was a quarter of a replay's per-event CPU in a
 * profile (docs/benchmarks/profiles/core.md). A block without a line starting with `traceparent`
 * carries no trace (spanContextOf reads exactly that key), so it is left undecoded.
 */
import type { MsgHdrs } from "@nats-io/nats-core";

const NEEDLE = new TextEncoder().encode("traceparent");

/** nats.js 3's message internals: the raw buffer and the header block's length. */
interface RawMsg {
  _rdata?: unknown;
  _msg?: { hdr?: unknown };
}

const LF = 10;

/**
 * True when a line of the header block `data[0, length)` starts with `key`; no copy of the
 * block. nats.js splits the block at CRLF and takes each key as written, so a key is always
 * right after a LF: the probe hops from LF to LF with the native `indexOf` (a block has four or
 * five) and compares there. A loop over every byte of the ~100-byte block was half the probe's
 * cost; a search for the needle anywhere stopped at every "t" of `Nats-Msg-Id` and
 * `Nats-Expected-Stream`.
 */
function hasKeyLine(data: Uint8Array, length: number, key: Uint8Array): boolean {
  const end = length - key.length;
  for (let i = data.indexOf(LF); i !== -1 && i < end; i = data.indexOf(LF, i + 1)) {
    let j = 0;
    while (j < key.length && data[i + 1 + j] === key[j]) j++;
    if (j === key.length) return true;
  }
  return false;
}

/** `msg.headers` when the block may hold a `traceparent` key (or cannot be inspected), else undefined. */
export function traceableHeaders(msg: { headers?: MsgHdrs }): MsgHdrs | undefined {
  // nats.js 3 keeps the raw buffer and the header block's length; any other shape is decoded.
  const inner = ((msg as { msg?: unknown }).msg ?? msg) as RawMsg;
  const data = inner._rdata;
  const hdr = inner._msg?.hdr;
  if (data instanceof Uint8Array && typeof hdr === "number" && !hasKeyLine(data, hdr, NEEDLE)) return undefined;
  return msg.headers;
}
