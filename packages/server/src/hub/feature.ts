/**
 * The hub module's part of a Sync platform: each Sync gets its own {@link HubRegistry} on its
 * first `topic.hub()`, closed with the Sync. Entry points pass {@link hubRegistries} to
 * `createSyncWith()`; importing this module does nothing by itself.
 */
import { InvalidArgumentError } from "@tidemark/shared";
import { hubsOf, type SyncPlatform } from "../core/sync.js";
import type { Sync } from "../core/types.js";
import { HubRegistry } from "./registry.js";

/** @internal Makes the hubs of one Sync. */
export const hubRegistries: SyncPlatform["hubs"] = (options, meters) => new HubRegistry(options, meters);

/** The hub registry of a Sync (created on first use). */
export function hubRegistryOf(sync: Sync): HubRegistry {
  const hubs = hubsOf(sync);
  if (!(hubs instanceof HubRegistry)) throw new InvalidArgumentError("this Sync's hubs are not a HubRegistry");
  return hubs;
}
