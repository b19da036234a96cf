/**
 * @internal The header block of one untraced publish: `Nats-Msg-Id` and `Nats-Expected-Stream`.
 * nats.js builds headers through `set()` (key canonicalisation, value checks, two key scans per
 * call) and encodes them by joining the map; on the publish path that was about a tenth of the
 * client's CPU (docs/benchmarks/profiles/core.md). Here the stream's part of the block is a
 * string made once per topic and each publish appends its id: the same bytes on the wire.
 * A traced publish (an active span) takes nats.js's own headers, with the trace context.
 */
import { MsgHdrsImpl, type Match } from "@nats-io/nats-core";

const MSG_ID = "Nats-Msg-Id";
const EXPECTED_STREAM = "Nats-Expected-Stream";
const encoder = new TextEncoder();

/** The stream's part of the block, made once per topic (stream names hold no line breaks). */
export function publishHeaderPrefix(stream: string): string {
  return `NATS/1.0\r\n${EXPECTED_STREAM}: ${stream}\r\n${MSG_ID}: `;
}

/** Headers of one publish; reads (`get`, `has`, iteration) see both entries like nats.js's own. */
export class PublishHeaders extends MsgHdrsImpl {
  /** The encoded block while the entries are the constructor's; a change drops it. */
  #block: string | undefined;

  /**
   * @param prefix from {@link publishHeaderPrefix}
   * @param stream the stream the prefix names
   * @param msgID the message id (checked by the caller: no line breaks)
   */
  constructor(prefix: string, stream: string, msgID: string) {
    super();
    // nats.js trims header values; so does this, for byte-identical ids.
    const id = msgID.trim();
    this.headers.set(EXPECTED_STREAM, [stream]);
    this.headers.set(MSG_ID, [id]);
    this.#block = `${prefix}${id}\r\n\r\n`;
  }

  override toString(): string {
    return this.#block ?? super.toString();
  }

  override append(k: string, v: string, match?: Match): void {
    this.#block = undefined;
    super.append(k, v, match);
  }

  override delete(k: string, match?: Match): void {
    this.#block = undefined;
    super.delete(k, match);
  }

  override encode(): Uint8Array {
    return encoder.encode(this.toString());
  }
}
