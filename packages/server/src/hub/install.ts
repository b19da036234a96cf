/**
 * Wires hubs into every Sync: `topic.hub()` resolves to the Sync's own {@link HubRegistry},
 * closed with the Sync. Imported for its effect by the package entry.
 */
import { extendSync, hubOptionsOf } from "../core/sync.js";
import type { Sync } from "../core/types.js";
import { HubRegistry } from "./registry.js";

const registries = new WeakMap<Sync, HubRegistry>();

/** The hub registry of a Sync (created on first use). */
export function hubRegistryOf(sync: Sync): HubRegistry {
  let registry = registries.get(sync);
  if (!registry) registries.set(sync, (registry = new HubRegistry(hubOptionsOf(sync))));
  return registry;
}

extendSync({
  hub: (sync, topic, tenantId) => hubRegistryOf(sync).get(topic, tenantId),
  closeHubs: (sync) => {
    registries.get(sync)?.close();
    registries.delete(sync);
  },
});
