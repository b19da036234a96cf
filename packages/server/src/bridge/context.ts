/**
 * @internal `BridgeContext`: what the connections of one bridge share — its resolved options,
 * counts, metrics and logs. Built once by `createBridge()` and handed to each connection.
 */
import type { Log } from "./log.js";
import type { BridgeMetrics } from "./metrics.js";
import type { EventFrames } from "./frames.js";
import type { ResolvedBridgeOptions } from "./options.js";
import type { HubIds } from "./hub-ids.js";
import type { PrincipalCounts } from "./principal-counts.js";
import type { UnauthenticatedCount } from "./unauthenticated.js";
import type { BackpressurePoller } from "./backpressure.js";
import type { StallClock } from "./stall.js";
import type { BridgeConnection, HubSource } from "./types.js";

/** @internal */
export interface BridgeContext<P = unknown> {
  readonly options: ResolvedBridgeOptions<P>;
  readonly metrics: BridgeMetrics;
  readonly frames: EventFrames;
  readonly hubIds: HubIds;
  /** The shared hub of a (topic, tenant): the topic's own `hub()`, read through the hub contract. */
  readonly hubOf: HubSource;
  readonly principals: PrincipalCounts;
  /** Sockets that have not said a valid `hello` yet (capped per process and per address). */
  readonly unauthenticated: UnauthenticatedCount;
  readonly connections: Set<BridgeConnection>;
  readonly backpressure: BackpressurePoller;
  readonly log: Log;
  /** The clock of the deadlines clients are held to: wall time minus the loop's own stalls (stall.ts). */
  readonly clock: StallClock;
  /** Logs a warning the first time `key` comes up (a misconfiguration seen on every connection). */
  warnOnce(key: string, msg: string): void;
  /** Set once by `drain()`: new upgrades are refused and new sockets told to go elsewhere. */
  draining: boolean;
}
