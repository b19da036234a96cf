/** The hooks: plain state from the provider's client, through `useSyncExternalStore`. */
import { useSyncExternalStore } from "react";
import type { FeedSpec } from "@tidemark/client";
import { EMPTY_FEED, type FeedState } from "./feed-store.js";
import { INITIAL_CONNECTION, type ConnectionState } from "./connection-store.js";
import { useSource } from "./provider.js";

const serverFeed = () => EMPTY_FEED;
const serverConnection = () => INITIAL_CONNECTION;

/**
 * A cursor-resumable feed: its saved history first, then new items, each once and in order.
 * Components that show the same feed share one subscription. A new `topic` or `tenantId` starts
 * from an empty `loading` state, never from the previous feed's items. `initial` (`{ last: n }`
 * or `{ since }`) is the first page of a feed with no saved state; `unread` and `markRead` are the
 * signed-in user's read state, the same in every tab and device.
 *
 * @example
 * const { items, status, error, unread, markRead } = useFeed<{ text: string }>({ topic: "notifications", tenantId: "acme", initial: { last: 50 } });
 */
export function useFeed<T = unknown>(spec: FeedSpec): FeedState<T> {
  const store = useSource("useFeed").feed<T>("hub", spec.topic, spec.tenantId, spec.initial);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverFeed);
}

/** New events only (`client.live`): no history, no cursor, starts empty after a reload. */
export function useLiveFeed<T = unknown>(spec: FeedSpec): FeedState<T> {
  const store = useSource("useLiveFeed").feed<T>("live", spec.topic, spec.tenantId);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverFeed);
}

/**
 * This tab's connection: `status` and how many tabs share it.
 *
 * @example
 * const { status, tabs } = useConnection();
 */
export function useConnection(): ConnectionState {
  const store = useSource("useConnection").connection;
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverConnection);
}
