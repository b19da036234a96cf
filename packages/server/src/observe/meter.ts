/**
 * Metrics through `@opentelemetry/api`: a no-op until the application registers a MeterProvider
 * (do it before the first publish, worker or bridge: the API has no proxy meter, so instruments
 * are made from the provider registered when they are first used). Runtime-neutral.
 *
 * Names are the Prometheus names of the bridge's `/metrics` endpoint, without the `_total` that
 * a Prometheus exporter appends to counters; durations are in seconds (unit `s`).
 */
import { ValueType, type Attributes, type Counter, type Histogram, type Meter } from "@opentelemetry/api";

/** Buckets of every duration histogram, in seconds (the bridge's lag buckets). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface Instruments {
  meter: Meter;
  publishDuration: Histogram;
  handlerDuration: Histogram;
  attempts: Counter;
  deadLetters: Counter;
  deliveryLag: Histogram;
}

function seconds(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, { description, unit: "s", advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
}

/** The instruments on `meter` (a MeterRegistry, `meters.ts`, makes them once per provider). */
export function makeInstruments(meter: Meter): Instruments {
  const counter = (name: string, description: string) => meter.createCounter(name, { description, valueType: ValueType.INT });
  return {
    meter,
    publishDuration: seconds(meter, "tidemark_publish_duration_seconds", "Time from publish() to the broker's acknowledgement, retries included."),
    handlerDuration: seconds(meter, "tidemark_worker_handler_duration_seconds", "Time one process() handler call ran."),
    attempts: counter("tidemark_worker_attempts", "Handler attempts, by topic, consumer and outcome (ack, retry, dead_letter)."),
    deadLetters: counter("tidemark_worker_dead_letters", "Events moved to a consumer's dead-letter stream."),
    deliveryLag: seconds(meter, "tidemark_bridge_delivery_lag_seconds", "Time from publish to sending the event frame."),
  };
}

/** Records a duration in seconds since `startedMs` (performance.now()). */
export function recordSince(h: Histogram, startedMs: number, attributes: Attributes): void {
  h.record(Math.max(0, performance.now() - startedMs) / 1000, attributes);
}
