/**
 * The options of a managed (embedded) nats-server. Runtime-neutral types: the core names them
 * (`createSync({ embedded })`) and passes them to the platform's transport, and the Node-only
 * `embedded/` folder starts the server with them, so neither folder imports the other.
 */

/**
 * Cluster membership: own route port and the other members' route URLs. `noAdvertise`: do not
 * tell clients the other members' client URLs (they keep to the URLs they were given).
 * `advertise`: the route address told to the other members (which they may dial directly).
 */
export interface EmbeddedClusterOptions {
  name: string;
  port: number;
  routes: string[];
  noAdvertise?: boolean;
  advertise?: string;
}

export interface EmbeddedNatsOptions {
  /** Data directory (store, config, pid and ports files). @default TIDEMARK_DATA_DIR or ".tidemark" */
  dataDir?: string;
  /** JetStream file-store limit; stream reservations count against it. @default 8 GiB */
  maxFileStore?: number;
  /** JetStream memory-store limit. @default 256 MiB */
  maxMemoryStore?: number;
  /** Core NATS max_payload: must exceed the largest topic payload plus headers. @default 8 MiB */
  maxPayload?: number;
  /** Open a WebSocket listener (for edge clients and tests). @default true */
  websocket?: boolean;
  /** Open the monitoring listener (/jsz). @default false */
  monitoring?: boolean;
  /** Binary to run. @default findNatsServer() */
  binary?: string;
  /**
   * When an acknowledged publish is on disk. "fsync": `sync_interval: always`, fsync before every
   * acknowledgement (survives a power failure; needs nats-server 2.10+). "buffered": the
   * server's default, fsync every two minutes (survives a process crash, not a power failure).
   * @default "fsync" where the binary supports it, else "buffered"
   */
  durability?: Durability;
  /**
   * Require the data directory's credentials (`nats/credentials.json`, 0600, made once) on
   * every connection, TCP and WebSocket. Only throwaway test servers turn this off.
   * @default true
   */
  credentials?: boolean;
  /** Time allowed for the server to write its ports file. @default 15000 */
  startTimeoutMs?: number;
  /** Extra config passed through to the renderer (cluster membership, name, fixed port). */
  serverName?: string;
  cluster?: EmbeddedClusterOptions;
  port?: number;
}

export type Durability = "fsync" | "buffered";
