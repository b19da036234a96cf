/**
 * The bridge every runtime of the edge suites serves: topic "notes" exposed to users whose
 * tenants start with their prefix, static tokens. Runtime-neutral (bundled for Deno, Bun and
 * workerd; imported as is on Node).
 */
import type { BridgeOptions, Sync } from "../../../src/edge/index.js";

export interface User {
  id: string;
  /** Tenants starting with this prefix are the user's. */
  prefix: string;
}

export const TOKENS: Record<string, User> = {
  alice: { id: "alice", prefix: "a-" },
  bob: { id: "bob", prefix: "b-" },
};

/** The topic the suites publish to and subscribe to (same declaration on both sides). */
export const TOPIC = { id: "notes" } as const;

export function bridgeOptions(sync: Sync): Omit<BridgeOptions<User>, "upgradeWebSocket"> {
  const topic = sync.topic<number>(TOPIC);
  return {
    sync,
    topics: [{ topic, authorize: (user, { tenantId }) => tenantId !== undefined && tenantId.startsWith(user.prefix) }],
    authenticate: (token) => TOKENS[token],
    principalKey: (user) => user.id,
    logLevel: "warn",
  };
}
