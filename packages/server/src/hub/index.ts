/** Hubs: one shared follower per (topic, tenant) per process, fed by one consumer per topic (or per tenant). */
export { HubRegistry, SharedHub, Cancellation } from "./registry.js";
export type { HubMode, HubRegistryOptions, HubProgress, SharedHubSubscribeOptions } from "./registry.js";
export { hubRegistryOf, hubRegistries } from "./feature.js";
