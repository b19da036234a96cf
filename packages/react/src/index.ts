/** @tidemark/react: a provider and hooks that return plain state, on `useSyncExternalStore`. */
export { TidemarkProvider } from "./provider.js";
export type { TidemarkProviderProps } from "./provider.js";
export { useFeed, useLiveFeed, useConnection } from "./hooks.js";
export type { FeedState, FeedStatus } from "./feed-store.js";
export type { ConnectionState } from "./connection-store.js";
