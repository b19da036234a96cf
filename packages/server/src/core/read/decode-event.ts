/** Builds the documented event object from a stored message of one incarnation of a topic. */
import { cursorWithPrefix, decodeEnvelope, eventIdFor, type TidemarkEvent } from "@tidemark/shared";
import type { JsMsg } from "@nats-io/jetstream";
import { keepTrace } from "../../observe/trace.js";

const decoder = new TextDecoder();

/** `prefix` is the incarnation's cursor prefix (`cursorPrefix`), made once per incarnation. */
export function decodeEvent<E>(incarnation: string, prefix: string, seq: number, data: Uint8Array, headers?: JsMsg["headers"]): TidemarkEvent<E> {
  const env = decodeEnvelope(decoder.decode(data));
  const eventId = eventIdFor(incarnation, seq);
  const cursor = cursorWithPrefix(prefix, seq);
  const d = env.d as E;
  // One literal per shape, in the documented key order (tenantId last): adding tenantId to a
  // finished object moved it out of the object's own slots (one more allocation per event).
  const event: TidemarkEvent<E> =
    env.t === undefined
      ? { eventId, cursor, streamSequence: seq, data: d, publishedAt: env.ts }
      : { eventId, cursor, streamSequence: seq, data: d, publishedAt: env.ts, tenantId: env.t };
  if (headers !== undefined) keepTrace(event, headers);
  return event;
}
