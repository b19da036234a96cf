/**
 * The NATS transport seam: how the core and the bridge get their NATS connection. Node uses TCP
 * (`@nats-io/transport-node`), other runtimes `wsconnect` over WebSocket. One process uses one
 * transport: the NATS client keeps a global transport factory, and mixing them stalls reconnects.
 */
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";

/** Opens a NATS connection (`connect` of transport-node, `wsconnect` of nats-core, or your own). */
export type NatsConnect = (options: ConnectionOptions) => Promise<NatsConnection>;

/** A managed nats-server the connector started and stops (Node only: the embedded server). */
export interface ManagedNats {
  readonly url: string;
  /** JetStream file-store limit, named in storage errors. */
  readonly maxFileStore?: number;
  /** What the connection logs in with (the embedded server's per-data-directory credentials). */
  readonly credentials?: { user: string; pass: string };
  /** The binary, its version and the durability in force, for `sync.server()` and logs. */
  readonly binary?: string;
  readonly version?: string;
  readonly durability?: "fsync" | "buffered";
  readonly dataDir?: string;
  stop(graceMs?: number): Promise<void>;
}

/** What a Sync needs from its platform. */
export interface NatsTransport<E = unknown> {
  /** `"tcp"` or `"websocket"`: named in errors and docs. */
  readonly kind: "tcp" | "websocket";
  readonly connect: NatsConnect;
  /** Starts a managed server when no URL is configured; absent where there is none (edge). */
  readonly startManaged?: (options: E | undefined) => Promise<ManagedNats>;
}
