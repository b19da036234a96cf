/** @internal State shared by the connections of one bridge. */
import type { BridgeLimits, BridgeOptions, ExposedTopic } from "./options.js";
import type { BridgeMetrics } from "./metrics.js";
import type { EventFrames } from "./frames.js";
import type { LogLevel } from "./log.js";
import type { HubRegistry } from "../hub/registry.js";
import type { Connection } from "./connection.js";
import type { PrincipalCounts } from "./principals.js";
import type { UnauthenticatedCount } from "./unauthenticated.js";

/**
 * An optional fast path a runtime adapter may put on its WSContext (the Node entry does):
 * send a frame's UTF-8 bytes as a TEXT message, so a frame shared by many sockets is encoded
 * once instead of once per socket. (`WSContext.send(Uint8Array)` would send a binary message.)
 */
export const SEND_TEXT_BYTES = Symbol.for("tidemark.sendTextBytes");
export interface TextBytesSender {
  sendTextBytes(bytes: Uint8Array): void;
}

/** A serialised frame; `bytes` (its UTF-8) is filled on first use by a socket that takes it. */
export interface FrameText {
  text: string;
  bytes?: Uint8Array;
}

/** The runtime-neutral view of a WebSocket the bridge writes to. */
export interface BridgeSocket {
  send(data: string): void;
  /** Sends a shared frame (text or, where the runtime allows, its cached UTF-8 bytes). */
  sendFrame(frame: FrameText): void;
  close(code: number, reason: string): void;
  /** Bytes queued for sending; 0 when the runtime does not tell. */
  readonly bufferedAmount: number;
}

/** @internal */
export interface BridgeCore<P = unknown> {
  readonly options: BridgeOptions<P>;
  readonly limits: BridgeLimits;
  readonly heartbeatMs: number;
  readonly metrics: BridgeMetrics;
  readonly frames: EventFrames;
  readonly topics: Map<string, ExposedTopic<P>>;
  readonly hubIds: HubIds;
  /** Used for topics whose `hub()` is not a Tidemark SharedHub (another Topic implementation). */
  readonly fallbackHubs: HubRegistry;
  readonly principals: PrincipalCounts;
  /** Sockets that have not said a valid `hello` yet (capped per process and per address). */
  readonly unauthenticated: UnauthenticatedCount;
  readonly connections: Set<Connection<P>>;
  readonly log: (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
  /** Logs a warning the first time `key` comes up (a misconfiguration seen on every connection). */
  warnOnce(key: string, msg: string): void;
  draining: boolean;
  /** Registers a paused connection with the drain poller. */
  watchPaused(connection: { checkDrained(): boolean }): void;
}

/** @internal Server-assigned hub ids, one per (mode, topic, tenant) in use on this process. */
export class HubIds {
  readonly #ids = new Map<string, { id: string; refs: number }>();
  #next = 0;

  get size(): number {
    return this.#ids.size;
  }

  acquire(key: string): string {
    let entry = this.#ids.get(key);
    if (!entry) this.#ids.set(key, (entry = { id: `h${(this.#next++).toString(36)}`, refs: 0 }));
    entry.refs++;
    return entry.id;
  }

  release(key: string): void {
    const entry = this.#ids.get(key);
    if (entry && --entry.refs <= 0) this.#ids.delete(key);
  }
}
