/**
 * Types shared by the tab side, the engine (in the SharedWorker or the leader tab) and the
 * messages between them. Everything that crosses a boundary is structured-clone safe.
 */
import type { ErrorPayload, ResetReason, TidemarkEvent } from "@tidemark/shared";
import type { ReadView } from "./read-log.js";
import type { BackoffOptions } from "./backoff.js";
import type { Status } from "./state.js";

/** One entry of a feed: an event, or a marker where events may be missing. */
export type FeedItem<T = unknown> =
  | {
      kind: "event";
      /** Local position in this profile's copy of the feed, strictly increasing. */
      n: number;
      event: TidemarkEvent<T>;
    }
  | {
      kind: "gap";
      n: number;
      /** Why the server could not resume: the events between may be lost. */
      reason: ResetReason;
      message: string;
      /** When the gap was noticed, ms since the epoch. */
      at: number;
    };

/** What a feed is: a topic and a tenant, cursor-resumable or live-only. */
export interface FeedSpec {
  topic: string;
  tenantId?: string;
  /**
   * `client.feed()` only: where a feed with no saved state starts — its tenant's last `last`
   * retained events (1–500), or those published since `since` (at most the newest 500) — instead
   * of the head. A feed with a saved cursor resumes from it; after a reset (expired or invalid
   * cursor) it goes on from the head with a gap marker, as always. Needs a bridge of protocol
   * 1.4; an older one starts at the head.
   */
  initial?: { last: number } | { since: number | Date };
}

/** @internal A tab's subscription as the engine sees it. */
export interface OpenRequest extends FeedSpec {
  /** Chosen by the tab, unique in the tab. */
  id: string;
  mode: "hub" | "live";
  /** The tab wants `onEffect` calls for this feed. */
  effects: boolean;
  /** Hub only: the first page of a feed with no saved state (`since` in ms). */
  initial?: { last: number } | { since: number };
}

/** @internal A read a tab makes: up to a cursor, or one event (its id and cursor). */
export type ReadMark = { cursor: string } | { item: string; eventId: string };

/** @internal Engine settings; the first tab to attach decides them. */
export interface EngineConfig {
  url: string;
  backoff: Required<BackoffOptions>;
  historyLimit: number;
  /** A tab silent for this long is considered gone. */
  tabTimeoutMs: number;
  /** A socket without `welcome` this long after it was created is dropped and retried. */
  connectTimeoutMs: number;
  /** Refresh the token this often (0: only when the server says it expired). */
  tokenRefreshMs: number;
  /** IndexedDB database name; `""` keeps history in memory only. */
  database: string;
  /**
   * Who the app says is signed in (`ClientOptions.principal`), or null. A tab that attaches
   * with another one makes the engine drop its token, connection and shown history.
   */
  principal: string | null;
}

/** @internal Messages from the engine to one tab, in order. */
export type TabMessage =
  /** The feed's items. `replace`: they replace what the tab shows (another user, a refusal). */
  | { type: "snapshot"; sub: string; items: FeedItem[]; caughtUp: boolean; replace: boolean }
  | { type: "items"; sub: string; items: FeedItem[]; effects: boolean }
  | { type: "caught_up"; sub: string }
  | { type: "sub_error"; sub: string; error: ErrorPayload }
  /** The feed's read state changed (or comes with a snapshot). */
  | { type: "read"; sub: string; read: ReadView }
  /** `error`: why the connection failed, with status `failed` (a final refusal: refusal.ts). */
  | { type: "status"; status: Status; tabs: number; connectionId?: string; error?: ErrorPayload };

/** @internal What `attach` answers. */
export interface AttachReply {
  /** The Web Lock the SharedWorker holds while it lives: granted to a waiting tab once it is gone (lifeline.ts). */
  lifeline?: string;
}

/** @internal A tab's view of the engine, the same over comlink, BroadcastChannel or in-page. */
export interface EngineApi {
  attach(
    tab: { id: string; focused: boolean },
    config: EngineConfig,
    listener: (message: TabMessage) => void,
    getToken?: () => string | Promise<string>,
  ): Promise<AttachReply | void>;
  open(tabId: string, request: OpenRequest): Promise<void>;
  close(tabId: string, subId: string): Promise<void>;
  /** Marks read in the tab's feed `subId`; resolves once saved (IndexedDB), sent when the server can take it. */
  markRead(tabId: string, subId: string, mark: ReadMark): Promise<void>;
  /** False when the engine does not know the tab (it must attach again). */
  heartbeat(tabId: string): Promise<boolean>;
  focus(tabId: string, focused: boolean): Promise<void>;
  network(tabId: string, online: boolean): Promise<void>;
  visible(tabId: string): Promise<void>;
  detach(tabId: string): Promise<void>;
  stats(): Promise<EngineStats>;
}

/** What the engine reports about itself. */
export interface EngineStats {
  tabs: number;
  feeds: number;
  status: Status;
  connectionId?: string;
  /** Sockets this engine opened since it started. */
  socketsOpened: number;
  /** Items held in memory across feeds. */
  items: number;
}
