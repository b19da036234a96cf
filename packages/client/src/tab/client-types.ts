/**
 * The tab side's public types: what `createClient()` takes ({@link ClientOptions}) and gives
 * (a {@link Client} and its {@link ClientState}).
 */
import type { TidemarkError } from "@tidemark/shared";
import type { BackoffOptions } from "../backoff.js";
import type { Status } from "../state.js";
import type { EngineStats, FeedSpec } from "../types.js";
import type { Feed } from "./tab-feed.js";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The bridge's WebSocket URL: `wss://host/ws`, or a path such as `/ws` on this origin. */
  url: string;
  /** Returns a token for `hello` and refreshes. Called in one tab for the whole profile. @default none (cookie) */
  getToken?: () => string | Promise<string>;
  /**
   * Makes the SharedWorker. Bundlers need to see the worker file, so pass
   * `() => new SharedWorker(new URL("./tidemark.worker.ts", import.meta.url), { type: "module", name: "tidemark" })`.
   * `false` skips SharedWorker. @default the package's own `worker.js` beside this module
   */
  worker?: (() => SharedWorker) | false;
  /** Force a transport (tests, debugging). @default "auto" */
  transport?: "auto" | "shared-worker" | "leader" | "direct";
  /** Items of history kept per feed, in IndexedDB and in each tab. @default 200 */
  historyLimit?: number;
  /** Reconnect backoff. @default { baseMs: 500, maxMs: 15000 } */
  reconnect?: BackoffOptions;
  /** How often this tab tells the engine it is alive. @default 5000 */
  heartbeatMs?: number;
  /** A tab silent this long is dropped (background tabs are throttled, so keep it generous). @default 90000 */
  tabTimeoutMs?: number;
  /**
   * A connection that has not reached `welcome` this long after it was opened (a frozen bridge,
   * a proxy holding the upgrade) is dropped and retried with the backoff. Keep it above the time
   * a bridge takes to answer during a reconnect storm. @default 20000
   */
  connectTimeoutMs?: number;
  /** Refresh the token this often, besides before `welcome.expiresAt`. 0 = only then. @default 0 */
  tokenRefreshMs?: number;
  /** IndexedDB database name; `""` keeps history in memory. @default "tidemark" */
  database?: string;
  /**
   * Who is signed in, as the app knows it: any stable string (a user id, or a hash of one).
   * History is always kept per principal as the server names it (`welcome.principal`); this
   * hint also lets saved history show before the server answers (offline), and when a tab
   * attaches with another value, the profile's engine drops its token, connection and shown
   * history at once (a sign-out and sign-in on a shared browser profile). @default none
   */
  principal?: string;
}

/** Where this tab's engine runs. */
export type Transport = "shared-worker" | "leader" | "follower" | "direct";

/** What a tab knows about the connection. */
export interface ClientState {
  status: Status;
  /** Tabs of this profile served by the same connection (this one included). */
  tabs: number;
  /** The server's id of the connection, while connected. */
  connectionId?: string;
  transport: Transport;
  /**
   * Why the connection failed, while `status` is `failed`: `ORIGIN_REFUSED` (the bridge's
   * `origins` does not list this page's origin) or `UNAUTHORIZED` (the token was refused, and a
   * fresh one from `getToken` too). Every feed's `error` and `onError` carry it as well.
   */
  error?: TidemarkError;
}


/** A tab's handle on the profile's connection. */
export interface Client {
  readonly state: ClientState;
  onState(listener: (state: ClientState) => void): () => void;
  /** A cursor-resumable feed with history kept in the profile. */
  feed<T = unknown>(spec: FeedSpec): Feed<T>;
  /** Best-effort live events: no cursor, no history. */
  live<T = unknown>(spec: FeedSpec): Feed<T>;
  stats(): Promise<EngineStats>;
  close(): void;
}
