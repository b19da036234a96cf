/**
 * Traces through `@opentelemetry/api`: a no-op until the application installs an OpenTelemetry
 * SDK, and runtime-neutral (the edge entries get it too). `publish()` carries the active span's
 * W3C trace context in the event's headers; a `process()` handler runs in a consumer span that
 * is a child of it and links to it, so one trace runs from the publish to the handler.
 *
 * The headers are written and read here, not through the registered propagator, so the trace
 * crosses the broker whatever propagators the application configured.
 */
import { context, trace, SpanKind, SpanStatusCode, type Link, type SpanContext } from "@opentelemetry/api";
import { headers as natsHeaders, type MsgHdrs } from "@nats-io/nats-core";

const TRACEPARENT = "traceparent";
const TRACESTATE = "tracestate";
const TRACEPARENT_FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const tracer = () => trace.getTracer("@tidemark/server");

/** Headers carrying the active span's context; undefined when no span is active (no SDK). */
export function traceHeaders(): MsgHdrs | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !trace.isSpanContextValid(sc)) return undefined;
  const h = natsHeaders();
  h.set(TRACEPARENT, `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`);
  const state = sc.traceState?.serialize();
  if (state) h.set(TRACESTATE, state);
  return h;
}

/** The span context an event's headers carry, when they carry a valid one. */
export function spanContextOf(headers: MsgHdrs | undefined): SpanContext | undefined {
  const m = TRACEPARENT_FORMAT.exec(headers?.get(TRACEPARENT) ?? "");
  if (!m) return undefined;
  const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true };
  return trace.isSpanContextValid(sc) ? sc : undefined;
}

// The publisher's span context of decoded events, kept beside them (not a field of the public
// event type) for the hub's delivery span. Weak: it goes with the event.
const carried = new WeakMap<object, SpanContext>();

/** Keeps the span context `headers` carry with `event`, for {@link recordDelivery}. */
export function keepTrace(event: object, headers: MsgHdrs | undefined): void {
  const sc = headers && spanContextOf(headers);
  if (sc) carried.set(event, sc);
}

/**
 * A `deliver <topic>` span, child of and linked to the publisher's span, for one event a hub
 * hands to its subscribers: once per event per hub, not per subscriber (fan-out is the hot path).
 */
export function recordDelivery(event: object & { eventId: string }, topic: string, subscribers: number): void {
  const producer = carried.get(event);
  if (!producer) return;
  const span = tracer().startSpan(
    `deliver ${topic}`,
    {
      kind: SpanKind.INTERNAL,
      links: [{ context: producer }],
      attributes: { "messaging.destination.name": topic, "messaging.message.id": event.eventId, "tidemark.hub.subscribers": subscribers },
    },
    trace.setSpanContext(context.active(), producer),
  );
  span.end();
}

export interface HandlerSpanInfo {
  topic: string;
  consumer: string;
  eventId: string;
  attempt: number;
}

/** Runs a `process()` handler in a consumer span, child of and linked to the event's publisher. */
export async function inHandlerSpan<R>(headers: MsgHdrs | undefined, info: HandlerSpanInfo, run: () => Promise<R> | R): Promise<R> {
  const t = tracer();
  const producer = spanContextOf(headers);
  const parent = producer ? trace.setSpanContext(context.active(), producer) : context.active();
  const links: Link[] = producer ? [{ context: producer }] : [];
  const span = t.startSpan(
    `process ${info.topic}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.destination.name": info.topic,
        "messaging.consumer.group.name": info.consumer,
        "messaging.message.id": info.eventId,
        "tidemark.attempt": info.attempt,
      },
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), run);
  } catch (err) {
    if (span.isRecording()) {
      const e = err instanceof Error ? err : { name: "NonError", message: safeText(err) };
      span.recordException(e);
      span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
    }
    throw err;
  } finally {
    span.end();
  }
}

/** Text of a thrown non-Error value; never throws (a null-prototype object has no toString). */
function safeText(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
