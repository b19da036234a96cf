/**
 * The meter registry: where a Sync, its hubs and workers, and a bridge record and report their
 * metrics. Passed in (`createSync({ meters })`, `createBridge({ meters })`) rather than kept in
 * module-level sets; what it reports is in `meter.ts` (instruments) and `bridge-meter.ts`
 * (observable gauges and counters).
 */
import { metrics, type Meter, type MeterProvider } from "@opentelemetry/api";
import { bridgeObservables, type BridgeSnapshot } from "./bridge-meter.js";
import { makeInstruments, type Instruments } from "./meter.js";

export interface MeterRegistryOptions {
  /**
   * Where instruments are made (meter `@tidemark/server`).
   * @default the global provider of `@opentelemetry/api`, looked up at each use, so a provider
   * registered after the registry was made is used from then on
   */
  meterProvider?: MeterProvider;
}

/**
 * Instruments of one MeterProvider, and the bridges and hub registries whose figures its
 * observable instruments report (summed: several bridges of one registry are one set of series).
 *
 * @example
 * const meters = createMeterRegistry({ meterProvider });
 * const sync = createSync({ meters });
 * const bridge = createBridge({ sync, meters, topics, authenticate, upgradeWebSocket });
 */
export class MeterRegistry {
  readonly #provider: MeterProvider | undefined;
  #made: { provider: MeterProvider; instruments: Instruments } | undefined;
  readonly #bridges = new Set<() => BridgeSnapshot>();
  readonly #hubs = new Set<() => number>();
  /** The meter the observable callback is registered on (again when the provider changes). */
  #observed: Meter | undefined;

  constructor(options: MeterRegistryOptions = {}) {
    this.#provider = options.meterProvider;
  }

  /** The instruments of the provider (made once per provider). */
  instruments(): Instruments {
    const provider = this.#provider ?? metrics.getMeterProvider();
    if (this.#made?.provider !== provider) this.#made = { provider, instruments: makeInstruments(provider.getMeter("@tidemark/server")) };
    return this.#made.instruments;
  }

  /** One finished handler call of a `process()` worker. */
  recordAttempt(topic: string, consumer: string, tookMs: number, outcome: "ack" | "retry" | "dead_letter"): void {
    const m = this.instruments();
    m.handlerDuration.record(tookMs / 1000, { topic, consumer });
    m.attempts.add(1, { topic, consumer, outcome });
  }

  /** Reports a bridge until the returned function is called. */
  observeBridge(snapshot: () => BridgeSnapshot): () => void {
    this.#observe();
    this.#bridges.add(snapshot);
    return () => void this.#bridges.delete(snapshot);
  }

  /**
   * Reports the followers of a hub registry as `tidemark_hub_followers` until the returned
   * function is called. Registries report themselves, so hubs used without a bridge count, and
   * two bridges on one Sync count its followers once.
   */
  observeHubs(followers: () => number): () => void {
    this.#observe();
    this.#hubs.add(followers);
    return () => void this.#hubs.delete(followers);
  }

  #observe(): void {
    const { meter } = this.instruments();
    if (this.#observed === meter) return;
    this.#observed = meter;
    bridgeObservables(meter, this.#bridges, this.#hubs);
  }
}

/** A meter registry on `meterProvider` (default: the global provider). */
export function createMeterRegistry(options: MeterRegistryOptions = {}): MeterRegistry {
  return new MeterRegistry(options);
}

/**
 * The process default, on the global provider: what a Sync, a hub registry or a bridge given no
 * `meters` reports to. One object, so that several bridges and Syncs of a process are summed in
 * one set of series (OpenTelemetry keeps one value per series and collection, not a sum).
 */
export const globalMeters: MeterRegistry = new MeterRegistry();
