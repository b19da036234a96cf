/**
 * The suites' bridge as a Cloudflare Worker: the Worker routes to one Durable Object that holds
 * the sockets, the NATS connection and the hubs. Bindings: NATS_WS_URL, TIDEMARK_NAMESPACE,
 * TIDEMARK_BRIDGE (the object namespace).
 */
import { createSync } from "../../../src/edge/index.js";
import { defineBridgeObject, routeToBridge, type DurableObjectNamespaceLike } from "../../../src/edge/workers.js";
import { bridgeOptions, type User } from "./options.js";

interface Env {
  NATS_WS_URL: string;
  TIDEMARK_NAMESPACE: string;
  TIDEMARK_BRIDGE: DurableObjectNamespaceLike;
}

export const TidemarkBridge = defineBridgeObject<User, Env>((env) =>
  bridgeOptions(createSync({ nats: { servers: env.NATS_WS_URL }, namespace: env.TIDEMARK_NAMESPACE })),
);

export default {
  fetch: (request: Request, env: Env) => routeToBridge(request, env.TIDEMARK_BRIDGE),
};
