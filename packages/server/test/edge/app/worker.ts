/**
 * The suites' bridge as a Cloudflare Worker: the Worker routes to one Durable Object that holds
 * the sockets, the NATS connection and the hubs. Bindings: NATS_WS_URL, TIDEMARK_NAMESPACE,
 * TIDEMARK_BRIDGE (the object namespace), TIDEMARK_IDLE_MS (optional).
 */
import { createSync } from "../../../src/edge/index.js";
import { defineBridgeObject, routeToBridge, type DurableObjectNamespaceLike } from "../../../src/edge/workers.js";
import { bridgeOptions, type User } from "./options.js";

interface Env {
  NATS_WS_URL: string;
  TIDEMARK_NAMESPACE: string;
  /** Idle shutdown of the bridge object, ms (text binding). */
  TIDEMARK_IDLE_MS?: string;
  TIDEMARK_BRIDGE: DurableObjectNamespaceLike;
}

export const TidemarkBridge = defineBridgeObject<User, Env>((env) => ({
  ...bridgeOptions(createSync({ nats: { servers: env.NATS_WS_URL, name: "tidemark-workerd" }, namespace: env.TIDEMARK_NAMESPACE })),
  idleShutdownMs: env.TIDEMARK_IDLE_MS === undefined ? undefined : Number(env.TIDEMARK_IDLE_MS),
}));

export default {
  fetch: (request: Request, env: Env) => routeToBridge(request, env.TIDEMARK_BRIDGE),
};
