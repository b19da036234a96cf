/** Hubs: one shared follower per (topic, tenant) per process. */
export { HubRegistry, SharedHub, Cancellation } from "./registry.js";
export type { HubRegistryOptions, HubProgress, SharedHubSubscribeOptions } from "./registry.js";
export { hubRegistryOf, hubRegistries } from "./feature.js";
