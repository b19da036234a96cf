/** Renders the nats-server configuration of a managed server. */
import type { NatsCredentials } from "./credentials.js";
import type { EmbeddedClusterOptions } from "../broker/embedded-options.js";

export interface NatsConfigOptions {
  /** Directory for the ports file, pid file and (with JetStream) the store. */
  dir: string;
  /** JetStream store directory. @default `${dir}/jetstream` */
  storeDir?: string;
  /** Explicit file-store limit, in bytes. */
  maxFileStore: number;
  /** Explicit memory-store limit, in bytes. */
  maxMemoryStore: number;
  /** Core NATS max_payload, in bytes. */
  maxPayload: number;
  /** Open a WebSocket listener. */
  websocket: boolean;
  /** Open the HTTP monitoring listener (/varz, /jsz). */
  monitoring: boolean;
  /** Server name, unique within a cluster. */
  serverName?: string;
  /** Cluster membership (see {@link EmbeddedClusterOptions}). */
  cluster?: EmbeddedClusterOptions;
  /** Fixed client port instead of a free one (used to restart a cluster node in place). */
  port?: number;
  /** Clients (TCP and WebSocket) must log in with these. @default none: anyone may connect */
  auth?: NatsCredentials;
  /** `sync_interval: always`: fsync before every acknowledgement (nats-server 2.10+). */
  syncAlways?: boolean;
}

const q = (s: string) => JSON.stringify(s);

/** Returns the text of a nats-server config file. Everything listens on 127.0.0.1 only. */
export function renderNatsConfig(o: NatsConfigOptions): string {
  const lines = [
    `host: "127.0.0.1"`,
    `port: ${o.port ?? -1}`,
    `ports_file_dir: ${q(o.dir)}`,
    `pid_file: ${q(`${o.dir}/nats-server.pid`)}`,
    `max_payload: ${o.maxPayload}`,
  ];
  if (o.serverName) lines.push(`server_name: ${q(o.serverName)}`);
  if (o.monitoring) lines.push(`http: "127.0.0.1:-1"`);
  // The WebSocket listener has no authorization block of its own, so it takes this one.
  if (o.auth) lines.push(`authorization {`, `  user: ${q(o.auth.user)}`, `  password: ${q(o.auth.pass)}`, `}`);
  lines.push(
    `jetstream {`,
    `  store_dir: ${q(o.storeDir ?? `${o.dir}/jetstream`)}`,
    `  max_file_store: ${o.maxFileStore}`,
    `  max_memory_store: ${o.maxMemoryStore}`,
    ...(o.syncAlways ? [`  sync_interval: always`] : []),
    `}`,
  );
  if (o.websocket) lines.push(`websocket {`, `  host: "127.0.0.1"`, `  port: -1`, `  no_tls: true`, `}`);
  if (o.cluster) {
    lines.push(
      `cluster {`,
      `  name: ${q(o.cluster.name)}`,
      `  host: "127.0.0.1"`,
      `  port: ${o.cluster.port}`,
      `  routes: [${o.cluster.routes.map(q).join(", ")}]`,
      ...(o.cluster.noAdvertise ? [`  no_advertise: true`] : []),
      ...(o.cluster.advertise ? [`  advertise: ${q(o.cluster.advertise)}`] : []),
      `}`,
    );
  }
  return lines.join("\n") + "\n";
}
