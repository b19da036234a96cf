/**
 * @internal The events of one consumer pass (consumer-read.ts), decoded from delivered
 * messages. Per pass, not per event: the cursor prefix of the pass's incarnation. The caller
 * reads the message's delivery info once and hands the sequence in: nats.js parses it from the
 * reply subject behind the `info` getter, and `seq` goes through it again.
 */
import { cursorPrefix, type TidemarkEvent } from "@tidemark/shared";
import type { JsMsg } from "@nats-io/jetstream";
import { decodeEvent } from "./decode-event.js";
import { traceableHeaders } from "./trace-probe.js";

/** Decodes a delivered message whose stream sequence is `seq` (its `m.info.streamSequence`). */
export type DeliveredDecoder<T> = (m: JsMsg, seq: number) => TidemarkEvent<T>;

export interface DeliveredSource {
  namespace: string;
  topic: string;
  /** The incarnation the pass reads (its TopicHandles'). */
  incarnation: string;
}

/** A decoder for the messages of one pass; the same events as `TopicRuntime.toEvent`. */
export function decodeDelivered<T>(source: DeliveredSource): DeliveredDecoder<T> {
  const { incarnation } = source;
  const prefix = cursorPrefix({ namespace: source.namespace, topic: source.topic, incarnation });
  // The header block is decoded only when it may hold a trace context (trace-probe.ts).
  return (m, seq) => decodeEvent<T>(incarnation, prefix, seq, m.data, traceableHeaders(m));
}
