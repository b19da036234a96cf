/**
 * @internal Types the bridge's parts share: the hub source a subscription reads and the view of
 * a connection the bridge-wide parts (drain, ticker, operations) use. A file of its own so that
 * `BridgeContext` (context.ts) names them without importing the connection or the subscription,
 * which import it.
 */
import type { BatchHub } from "../hub/contract.js";
import type { ExposedTopic } from "./options.js";

/** @internal The hub of a (topic, tenant) a hub-mode subscription reads. */
export type HubSource = (topic: ExposedTopic<unknown>["topic"], tenantId: string | undefined) => Pick<BatchHub<unknown>, "subscribeBatches">;

/** @internal A connection as the bridge-wide parts see it (`Connection` of connection.ts). */
export interface BridgeConnection {
  /** Sends a text frame (a `drain`). */
  send(text: string): void;
  /** Closes the socket with this code and reason. */
  close(code: number, reason: string): void;
  /** The ticker's visit: heartbeats, token expiry, hello deadline. */
  tick(now: number): void;
  /** Authorizes every open subscription again. */
  reauthorize(): Promise<void>;
  /** Runs `authenticate` again on the connection's token. */
  reauthenticate(): Promise<void>;
}
