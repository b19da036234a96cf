/**
 * @internal The header block of one untraced publish: `Nats-Msg-Id` and `Nats-Expected-Stream`.
 * nats.js builds headers through `set()` (key canonicalisation, value checks, two key scans per
 * call) into a Map and encodes them by joining it; on the publish path that was about a tenth of
 * the client's CPU (docs/benchmarks/profiles/core.md). Here the stream's part of the block is
 * encoded once per topic and each publish copies it and writes its id after it: the same bytes
 * on the wire, one allocation. nats.js only calls `encode()` on a publish's headers; anything
 * else (a read, a change) first builds nats.js's own headers with the same entries.
 * A traced publish (an active span) takes nats.js's own headers, with the trace context.
 */
import { MsgHdrsImpl, type Match, type MsgHdrs } from "@nats-io/nats-core";

export const MSG_ID = "Nats-Msg-Id";
export const EXPECTED_STREAM = "Nats-Expected-Stream";
const encoder = new TextEncoder();
const CR = 13;
const LF = 10;

/** The stream's part of a publish's header block, made once per topic. */
export interface PublishHeaderPrefix {
  stream: string;
  /** `NATS/1.0`, the expected stream and `Nats-Msg-Id: `, encoded. */
  bytes: Uint8Array;
}

/** Made once per topic (stream names hold no line breaks). */
export function publishHeaderPrefix(stream: string): PublishHeaderPrefix {
  return { stream, bytes: encoder.encode(`NATS/1.0\r\n${EXPECTED_STREAM}: ${stream}\r\n${MSG_ID}: `) };
}

/** Headers of one publish; reads (`get`, `has`, iteration) see both entries like nats.js's own. */
export class PublishHeaders implements MsgHdrs {
  readonly #prefix: PublishHeaderPrefix;
  readonly #id: string;
  /** nats.js's headers with the same entries, once something other than encode() is asked. */
  #full: MsgHdrs | undefined;

  /**
   * @param prefix from {@link publishHeaderPrefix}
   * @param msgID the message id (checked by the caller: no line breaks)
   */
  constructor(prefix: PublishHeaderPrefix, msgID: string) {
    this.#prefix = prefix;
    // nats.js trims header values; so does this, for byte-identical ids.
    this.#id = msgID.trim();
  }

  encode(): Uint8Array {
    if (this.#full) return (this.#full as MsgHdrsImpl).encode();
    const id = this.#id;
    const prefix = this.#prefix.bytes;
    const out = new Uint8Array(prefix.length + id.length + 4);
    out.set(prefix);
    let at = prefix.length;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      // Generated ids are ASCII; an idempotency key may not be: encode the whole block then.
      if (c > 0x7f) return encoder.encode(this.toString());
      out[at++] = c;
    }
    out[at++] = CR;
    out[at++] = LF;
    out[at++] = CR;
    out[at] = LF;
    return out;
  }

  toString(): string {
    return this.#full ? this.#full.toString() : `NATS/1.0\r\n${EXPECTED_STREAM}: ${this.#prefix.stream}\r\n${MSG_ID}: ${this.#id}\r\n\r\n`;
  }

  #headers(): MsgHdrs {
    if (!this.#full) {
      const full = new MsgHdrsImpl();
      full.headers.set(EXPECTED_STREAM, [this.#prefix.stream]);
      full.headers.set(MSG_ID, [this.#id]);
      this.#full = full;
    }
    return this.#full;
  }

  get hasError(): boolean {
    return this.#headers().hasError;
  }
  get status(): string {
    return this.#headers().status;
  }
  get code(): number {
    return this.#headers().code;
  }
  get description(): string {
    return this.#headers().description;
  }
  get(k: string, match?: Match): string {
    return this.#headers().get(k, match);
  }
  set(k: string, v: string, match?: Match): void {
    this.#headers().set(k, v, match);
  }
  append(k: string, v: string, match?: Match): void {
    this.#headers().append(k, v, match);
  }
  has(k: string, match?: Match): boolean {
    return this.#headers().has(k, match);
  }
  keys(): string[] {
    return this.#headers().keys();
  }
  values(k: string, match?: Match): string[] {
    return this.#headers().values(k, match);
  }
  delete(k: string, match?: Match): void {
    this.#headers().delete(k, match);
  }
  last(k: string, match?: Match): string {
    return this.#headers().last(k, match);
  }
  [Symbol.iterator](): Iterator<[string, string[]]> {
    return this.#headers()[Symbol.iterator]();
  }
}
