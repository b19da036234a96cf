/**
 * The Node transport: TCP through `@nats-io/transport-node`, and the embedded nats-server when
 * no URL is configured. Only the Node entry imports this file.
 */
import { connect } from "@nats-io/transport-node";
import type { ConnectionOptions } from "@nats-io/nats-core";
import type { EmbeddedNatsOptions } from "../embedded/server.js";
import { startSupervisedNats } from "../embedded/supervise.js";
import type { NatsTransport } from "./types.js";

/** @internal */
export const nodeTransport: NatsTransport<EmbeddedNatsOptions> = {
  kind: "tcp",
  // transport-node's options differ from nats-core's only in `tls` (Node's TLS options).
  connect: (options: ConnectionOptions) => connect(options as Parameters<typeof connect>[0]),
  // Supervised: a server that dies under the application is started again on its port and store.
  startManaged: (options) => startSupervisedNats(options),
};
