/**
 * The bridge's gauges and counters as OpenTelemetry observable instruments, read from the same
 * `BridgeMetrics` that renders `/metrics`, so both report the same numbers under the same names.
 * The bridges of one meter registry (`meters.ts`) are summed. Hub followers are reported by the
 * hub registries.
 */
import type { Attributes, BatchObservableCallback, Meter, Observable } from "@opentelemetry/api";

/** What one bridge reports. Counters and gauges as in `/metrics`; labelled ones as records. */
export interface BridgeSnapshot {
  gauges: Record<string, number>;
  labelledGauges: Record<string, [label: string, values: Record<string, number>]>;
  counters: Record<string, number>;
  labelledCounters: Record<string, [label: string, values: Record<string, number>]>;
}

const GAUGES: Record<string, string> = {
  tidemark_bridge_connections: "Open WebSocket connections.",
  tidemark_bridge_unauthenticated_connections: "Connections that have not said a valid hello yet.",
  tidemark_bridge_paused_connections: "Connections paused by backpressure.",
  tidemark_bridge_subscriptions: "Open subscriptions by mode.",
  tidemark_bridge_hubs: "Distinct (topic, tenant, mode) in use by this bridge.",
  tidemark_hub_followers: "Hub followers (one JetStream consumer each) of the process.",
  tidemark_jetstream_consumers: "JetStream consumers the Sync's reads hold open.",
  tidemark_bridge_draining: "1 while the bridge drains for shutdown.",
};
const COUNTERS: Record<string, string> = {
  tidemark_bridge_events_delivered: "Event frames sent.",
  tidemark_bridge_live_events_dropped: "Live-mode events dropped for backpressure.",
  tidemark_bridge_backpressure_pauses: "Times a connection was paused for a full send buffer.",
  tidemark_bridge_replays: "Catch-up replays started by subscriptions behind the hub window.",
  tidemark_bridge_subscription_retries: "Hub subscriptions resumed after broker trouble.",
  tidemark_bridge_event_loop_stalled_seconds: "Time the event loop did not turn (ticks late by over 100 ms), not counted against clients' deadlines.",
  tidemark_hub_covered: "Resuming hub followers served from their topic feed's recent events (no replay of their own).",
  tidemark_hub_cover_reads: "Whole-topic reads that extended a topic feed's recent events backwards for resuming followers.",
  tidemark_hub_cover_read_seconds: "Time spent in those reads.",
  tidemark_hub_fallbacks: "Resuming hub followers that replayed their tenant on their own, by reason.",
  tidemark_hub_subscriber_replays: "Hub subscribers that fell behind their follower's window and replayed on their own.",
  tidemark_bridge_resets: "Reset frames sent, by reason.",
  tidemark_bridge_rejected: "Refused upgrades, subscriptions and connections, by reason.",
  tidemark_bridge_errors: "Error frames sent, by code.",
};

/**
 * Registers the observable instruments on `meter`, read at each collection from the bridges and
 * hub registries in the two sets (live views: a source added later is read from then on).
 */
export function bridgeObservables(meter: Meter, sources: ReadonlySet<() => BridgeSnapshot>, hubSources: ReadonlySet<() => number>): void {
  const observables = new Map<string, Observable>();
  for (const [name, description] of Object.entries(GAUGES)) observables.set(name, meter.createObservableGauge(name, { description }));
  for (const [name, description] of Object.entries(COUNTERS)) observables.set(name, meter.createObservableCounter(name, { description }));
  const callback: BatchObservableCallback = (result) => {
    const sums = new Map<string, Map<string, { attributes: Attributes; value: number }>>();
    const add = (name: string, attributes: Attributes, value: number) => {
      const byAttrs = sums.get(name) ?? sums.set(name, new Map()).get(name)!;
      const key = JSON.stringify(attributes);
      const row = byAttrs.get(key) ?? byAttrs.set(key, { attributes, value: 0 }).get(key)!;
      row.value += value;
    };
    for (const snapshot of sources) {
      const s = snapshot();
      for (const [name, v] of Object.entries({ ...s.gauges, ...s.counters })) add(name, {}, v);
      for (const [name, [label, values]] of Object.entries({ ...s.labelledGauges, ...s.labelledCounters })) {
        for (const [k, v] of Object.entries(values)) add(name, { [label]: k }, v);
      }
    }
    for (const followers of hubSources) add("tidemark_hub_followers", {}, followers());
    for (const [name, rows] of sums) {
      const o = observables.get(name);
      if (o) for (const { attributes, value } of rows.values()) result.observe(o, value, attributes);
    }
  };
  meter.addBatchObservableCallback(callback, [...observables.values()]);
}
