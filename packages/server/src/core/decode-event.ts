/** Builds the documented event object from a stored message of one incarnation of a topic. */
import { cursorWithPrefix, decodeEnvelope, eventIdFor, type TidemarkEvent } from "@tidemark/shared";
import type { JsMsg } from "@nats-io/jetstream";
import { keepTrace } from "../observe/trace.js";

const decoder = new TextDecoder();

/** `prefix` is the incarnation's cursor prefix (`cursorPrefix`), made once per incarnation. */
export function decodeEvent<E>(incarnation: string, prefix: string, seq: number, data: Uint8Array, headers?: JsMsg["headers"]): TidemarkEvent<E> {
  const env = decodeEnvelope(decoder.decode(data));
  const event: TidemarkEvent<E> = {
    eventId: eventIdFor(incarnation, seq),
    cursor: cursorWithPrefix(prefix, seq),
    streamSequence: seq,
    data: env.d as E,
    publishedAt: env.ts,
  };
  if (env.t !== undefined) event.tenantId = env.t;
  keepTrace(event, headers);
  return event;
}
