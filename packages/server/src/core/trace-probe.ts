/**
 * @internal The headers of a delivered message, only when they may carry a trace context.
 * nats.js turns a header block into a map on the first read of `headers`; every stored event
 * has one (its `Nats-Msg-Id`), and decoding it was a quarter of a replay's per-event CPU in a
 * profile (docs/benchmarks/profiles/core.md). A block without the bytes `traceparent` carries
 * no trace (spanContextOf reads exactly that key), so it is left undecoded.
 */
import type { MsgHdrs } from "@nats-io/nats-core";

const NEEDLE = new TextEncoder().encode("traceparent");

/** nats.js 3's message internals: the raw buffer and the header block's length. */
interface RawMsg {
  _rdata?: unknown;
  _msg?: { hdr?: unknown };
}

/** True when `data[0, length)` holds `needle`; no copy of the block. */
function contains(data: Uint8Array, length: number, needle: Uint8Array): boolean {
  const first = needle[0]!;
  const end = length - needle.length;
  outer: for (let i = data.indexOf(first); i !== -1 && i <= end; i = data.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (data[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** `msg.headers` when the block may hold `traceparent` (or cannot be inspected), else undefined. */
export function traceableHeaders(msg: { headers?: MsgHdrs }): MsgHdrs | undefined {
  // nats.js 3 keeps the raw buffer and the header block's length; any other shape is decoded.
  const inner = ((msg as { msg?: unknown }).msg ?? msg) as RawMsg;
  const data = inner._rdata;
  const hdr = inner._msg?.hdr;
  if (data instanceof Uint8Array && typeof hdr === "number" && !contains(data, hdr, NEEDLE)) return undefined;
  return msg.headers;
}
