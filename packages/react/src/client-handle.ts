/**
 * What a store uses of its client source: take the client while it needs it and give it back.
 * A file of its own so that the stores and `ClientSource`, which makes them, do not import
 * each other.
 */
import type { Client } from "@tidemark/client";

/** @internal Implemented by `ClientSource` (client-source.ts). */
export interface ClientHandle {
  /** The client, made now if needed. Call from effects and subscriptions, never from render. */
  acquire(): Client;
  /** Lets go of the client taken by `acquire()`. */
  release(): void;
}
