/**
 * Metrics of a bridge: rendered in the Prometheus text format for `/metrics`, and reported under
 * the same names through OpenTelemetry (`../observe/bridge-meter.ts`) when the app has an SDK.
 */
import { DURATION_BUCKETS as LAG_BUCKETS } from "../observe/meter.js";
import { globalMeters, type MeterRegistry } from "../observe/meters.js";
import type { BridgeSnapshot } from "../observe/bridge-meter.js";
import type { ProcessMemory } from "./memory.js";

/** What the bridge adds from outside the counters (hubs, the Sync, the drain state). */
export interface BridgeExtra {
  hubFollowers: number;
  /** Whole-topic feeds of hub mode "topic" (one JetStream consumer each). */
  hubFeeds: number;
  hubs: number;
  draining: boolean;
  unauthenticated: number;
  jetstreamConsumers: number;
  /** How the hubs of the process caught resuming followers up (hub/stats.ts). */
  hubCatchUps?: { covered: number; coverReads: number; coverSeconds: number; fallbacks: Record<string, number>; subscriberReplays: number };
  /** Time the bridge's event loop was seen stalled (stall.ts), in seconds. */
  loopStalledSeconds?: number;
  memory?: ProcessMemory;
}

/** @internal Counters and gauges of one bridge. */
export class BridgeMetrics {
  connections = 0;
  pausedConnections = 0;
  subscriptions = { hub: 0, live: 0 };
  eventsDelivered = 0;
  liveEventsDropped = 0;
  backpressurePauses = 0;
  replays = 0;
  subscriptionRetries = 0;
  resets: Record<string, number> = {};
  rejected: Record<string, number> = {};
  errors: Record<string, number> = {};
  readonly #lagCounts = new Array<number>(LAG_BUCKETS.length + 1).fill(0);
  #lagSum = 0;
  #lagCount = 0;
  /** The event of the deliveries not observed yet (see `delivered`), and how many. */
  #lagEvent: { readonly publishedAt: number } | undefined;
  #lagPending = 0;

  readonly #meters: MeterRegistry;

  /** @param meters where the delivery lag is recorded for OpenTelemetry (the bridge's). */
  constructor(meters: MeterRegistry = globalMeters) {
    this.#meters = meters;
  }

  /**
   * One event frame sent. Its publish-to-send delay is observed once for all the deliveries of
   * the same event in a row — the hub's live fan-out hands it to every caught-up socket in one
   * loop — at the end of that turn (a microtask), so the loop does only the sends.
   */
  delivered(event: { readonly publishedAt: number }): void {
    this.eventsDelivered++;
    if (event === this.#lagEvent) {
      this.#lagPending++;
      return;
    }
    this.#flushLag();
    this.#lagEvent = event;
    this.#lagPending = 1;
    queueMicrotask(this.#flush);
  }

  readonly #flush = () => this.#flushLag();

  #flushLag(): void {
    const event = this.#lagEvent;
    if (!event) return;
    this.#lagEvent = undefined;
    this.observeLag(Math.max(0, Date.now() - event.publishedAt) / 1000, this.#lagPending);
    this.#lagPending = 0;
  }

  /**
   * Publish-to-send delay of `count` deliveries with the same delay. Each delivery still counts
   * once (OpenTelemetry's histogram takes no weight: one record each).
   */
  observeLag(seconds: number, count = 1): void {
    if (count <= 0) return;
    let i = 0;
    while (i < LAG_BUCKETS.length && seconds > LAG_BUCKETS[i]!) i++;
    this.#lagCounts[i]! += count;
    this.#lagSum += seconds * count;
    this.#lagCount += count;
    const lag = this.#meters.instruments().deliveryLag;
    for (let n = 0; n < count; n++) lag.record(seconds);
  }

  /** The gauges and counters for OpenTelemetry, named as in {@link render} (counters without `_total`). */
  snapshot(extra: BridgeExtra): BridgeSnapshot {
    this.#flushLag();
    return {
      gauges: {
        tidemark_bridge_connections: this.connections,
        tidemark_bridge_unauthenticated_connections: extra.unauthenticated,
        tidemark_bridge_paused_connections: this.pausedConnections,
        tidemark_bridge_hubs: extra.hubs,
        tidemark_jetstream_consumers: extra.jetstreamConsumers,
        tidemark_bridge_draining: extra.draining ? 1 : 0,
      },
      labelledGauges: { tidemark_bridge_subscriptions: ["mode", this.subscriptions] },
      counters: {
        tidemark_bridge_events_delivered: this.eventsDelivered,
        tidemark_bridge_live_events_dropped: this.liveEventsDropped,
        tidemark_bridge_backpressure_pauses: this.backpressurePauses,
        tidemark_bridge_replays: this.replays,
        tidemark_bridge_subscription_retries: this.subscriptionRetries,
        tidemark_bridge_event_loop_stalled_seconds: extra.loopStalledSeconds ?? 0,
        tidemark_hub_covered: extra.hubCatchUps?.covered ?? 0,
        tidemark_hub_cover_reads: extra.hubCatchUps?.coverReads ?? 0,
        tidemark_hub_cover_read_seconds: extra.hubCatchUps?.coverSeconds ?? 0,
        tidemark_hub_subscriber_replays: extra.hubCatchUps?.subscriberReplays ?? 0,
      },
      labelledCounters: {
        tidemark_bridge_resets: ["reason", this.resets],
        tidemark_bridge_rejected: ["reason", this.rejected],
        tidemark_bridge_errors: ["code", this.errors],
        tidemark_hub_fallbacks: ["reason", extra.hubCatchUps?.fallbacks ?? {}],
      },
    };
  }

  render(extra: BridgeExtra): string {
    this.#flushLag();
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, rows: [string, number][]) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of rows) out.push(`${name}${labels} ${value}`);
    };
    const labelled = (label: string, values: Record<string, number>): [string, number][] =>
      Object.entries(values).map(([k, v]) => [`{${label}="${k}"}`, v]);
    metric("tidemark_bridge_connections", "gauge", "Open WebSocket connections.", [["", this.connections]]);
    metric("tidemark_bridge_unauthenticated_connections", "gauge", "Connections that have not said a valid hello yet.", [["", extra.unauthenticated]]);
    metric("tidemark_bridge_paused_connections", "gauge", "Connections paused by backpressure.", [["", this.pausedConnections]]);
    metric("tidemark_bridge_subscriptions", "gauge", "Open subscriptions by mode.", labelled("mode", this.subscriptions));
    metric("tidemark_bridge_hubs", "gauge", "Distinct (topic, tenant, mode) in use by this bridge.", [["", extra.hubs]]);
    metric("tidemark_hub_followers", "gauge", "Hub followers (one JetStream consumer each) of the process.", [["", extra.hubFollowers]]);
    metric("tidemark_hub_feeds", "gauge", "Whole-topic hub feeds (hub mode topic: one JetStream consumer per topic) of the process.", [["", extra.hubFeeds]]);
    metric("tidemark_jetstream_consumers", "gauge", "JetStream consumers the Sync's reads hold open (sync.stats().consumers).", [["", extra.jetstreamConsumers]]);
    metric("tidemark_bridge_events_delivered_total", "counter", "Event frames sent.", [["", this.eventsDelivered]]);
    metric("tidemark_bridge_live_events_dropped_total", "counter", "Live-mode events dropped for backpressure.", [["", this.liveEventsDropped]]);
    metric("tidemark_bridge_backpressure_pauses_total", "counter", "Times a connection was paused for a full send buffer.", [["", this.backpressurePauses]]);
    metric("tidemark_bridge_replays_total", "counter", "Catch-up replays started by subscriptions behind the hub window.", [["", this.replays]]);
    metric("tidemark_bridge_subscription_retries_total", "counter", "Hub subscriptions resumed after broker trouble.", [["", this.subscriptionRetries]]);
    metric("tidemark_bridge_event_loop_stalled_seconds_total", "counter", "Time the event loop did not turn (ticks late by over 100 ms), not counted against clients' deadlines.", [["", extra.loopStalledSeconds ?? 0]]);
    metric("tidemark_bridge_resets_total", "counter", "Reset frames sent, by reason.", labelled("reason", this.resets));
    metric("tidemark_bridge_rejected_total", "counter", "Refused upgrades, subscriptions and connections, by reason.", labelled("reason", this.rejected));
    metric("tidemark_bridge_errors_total", "counter", "Error frames sent, by code.", labelled("code", this.errors));
    const c = extra.hubCatchUps;
    metric("tidemark_hub_covered_total", "counter", "Resuming hub followers served from their topic feed's recent events (no replay of their own).", [["", c?.covered ?? 0]]);
    metric("tidemark_hub_cover_reads_total", "counter", "Whole-topic reads that extended a topic feed's recent events backwards for resuming followers.", [["", c?.coverReads ?? 0]]);
    metric("tidemark_hub_cover_read_seconds_total", "counter", "Time spent in those reads.", [["", c?.coverSeconds ?? 0]]);
    metric("tidemark_hub_fallbacks_total", "counter", "Resuming hub followers that replayed their tenant on their own, by reason.", labelled("reason", c?.fallbacks ?? {}));
    metric("tidemark_hub_subscriber_replays_total", "counter", "Hub subscribers that fell behind their follower's window and replayed on their own.", [["", c?.subscriberReplays ?? 0]]);
    metric("tidemark_bridge_draining", "gauge", "1 while the bridge drains for shutdown.", [["", extra.draining ? 1 : 0]]);
    const memory = extra.memory;
    if (memory) {
      metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", [["", memory.rss]]);
      metric("nodejs_heap_size_used_bytes", "gauge", "JavaScript heap in use, in bytes.", [["", memory.heapUsed]]);
      metric("nodejs_heap_size_total_bytes", "gauge", "JavaScript heap reserved, in bytes.", [["", memory.heapTotal]]);
      metric("nodejs_external_memory_bytes", "gauge", "Memory of buffers and other objects outside the heap, in bytes.", [["", memory.external]]);
    }
    out.push(
      "# HELP tidemark_bridge_delivery_lag_seconds Time from publish to sending the event frame.",
      "# TYPE tidemark_bridge_delivery_lag_seconds histogram",
    );
    let cumulative = 0;
    LAG_BUCKETS.forEach((le, i) => {
      cumulative += this.#lagCounts[i]!;
      out.push(`tidemark_bridge_delivery_lag_seconds_bucket{le="${le}"} ${cumulative}`);
    });
    cumulative += this.#lagCounts[LAG_BUCKETS.length]!;
    out.push(`tidemark_bridge_delivery_lag_seconds_bucket{le="+Inf"} ${cumulative}`);
    out.push(`tidemark_bridge_delivery_lag_seconds_sum ${this.#lagSum}`);
    out.push(`tidemark_bridge_delivery_lag_seconds_count ${this.#lagCount}`);
    return out.join("\n") + "\n";
  }

  /** @internal */
  bump(map: Record<string, number>, key: string): void {
    map[key] = (map[key] ?? 0) + 1;
  }
}
