/** The WebSocket transport of edge runtimes: `wsconnect` from `@nats-io/nats-core`. */
import { wsconnect } from "@nats-io/nats-core";
import type { NatsConnect, NatsTransport } from "./types.js";

/** `wsconnect`, or your own connect function (a wrapper that adds credentials, a test double). */
export function websocketTransport(connect: NatsConnect = wsconnect): NatsTransport<unknown> {
  return { kind: "websocket", connect };
}
