/**
 * The bridge wire protocol, version 1 (revision 1.5): JSON text frames told apart by `type`.
 * `docs/protocol.md` is the prose description; this file is the source of truth for shapes.
 */
import type { Cursor } from "./cursor.js";
import type { ErrorCode } from "./errors.js";
import type { TidemarkEvent } from "./envelope.js";

export const PROTOCOL_VERSION = 1;
/**
 * The protocol's compatible revision (v1.x), sent in `welcome.revision` since 1.4. A client
 * sends the frames and fields of a revision (`mark_read`, `subscribe.initial`, `subscribe.read`)
 * only to a server whose `welcome.revision` is at least that one: an older server closes on an
 * unknown frame type. 1.5: the server pings every `heartbeatMs` (10 s by default) and closes a
 * connection silent for five intervals, so a client answers a ping only when it sent nothing for
 * two intervals ({@link PONG_AFTER_BEATS}).
 */
export const PROTOCOL_REVISION = 5;
/**
 * Revision 1.5 and later: a connection silent (nothing received) for this many heartbeats is
 * closed by the server with 4408. Before 1.5 it was two.
 */
export const SERVER_SILENT_BEATS = 5;
/** Revision 1.5 and later: a client answers `ping` with `pong` only when it sent nothing for this many heartbeats. */
export const PONG_AFTER_BEATS = 2;
/** WebSocket subprotocol name offered by clients. */
export const PROTOCOL_NAME = "tidemark.v1";

/** Subscription modes. */
export const SubscriptionMode = {
  /** Cursor-resumable: replay after the cursor, then live, no hole, no duplicate. */
  Hub: "hub",
  /** Best effort: new events only, no cursor. */
  Live: "live",
} as const;
export type SubscriptionMode = (typeof SubscriptionMode)[keyof typeof SubscriptionMode];

/** Why a subscription restarted from the head. */
export const ResetReason = {
  /** The cursor is not a cursor, or it points past the topic's head. */
  InvalidCursor: "invalid_cursor",
  /** The cursor belongs to another topic, namespace or incarnation of the topic. */
  CursorMismatch: "cursor_mismatch",
  /** Retention removed events after the cursor (expired cursor, or a reader left too far behind). */
  RetentionGap: "retention_gap",
} as const;
export type ResetReason = (typeof ResetReason)[keyof typeof ResetReason];

/** Which limit an `error` frame with code `LIMIT_EXCEEDED` is about. */
export const LimitName = {
  FrameBytes: "frame_bytes",
  Subscriptions: "subscriptions",
  SubscribeRate: "subscribe_rate",
  ConnectionsPerPrincipal: "connections_per_principal",
  UnauthenticatedTime: "unauthenticated_time",
  /** `mark_read` frames per second on one connection (1.4). */
  MarkReadRate: "mark_read_rate",
  /** Items read one by one above a read cursor (1.4). */
  ReadItems: "read_items",
} as const;
export type LimitName = (typeof LimitName)[keyof typeof LimitName];

/** WebSocket close codes the bridge uses (4xxx are application codes). */
export const CloseCode = {
  Normal: 1000,
  /** Drain: the server is shutting down; reconnect (to any bridge) and resume. */
  GoingAway: 1001,
  /** Malformed JSON, unknown frame type, bad fields, or a frame before `hello`. */
  ProtocolError: 4400,
  /** Authentication failed, the token expired without a refresh, or the token was revoked. */
  Unauthorized: 4401,
  /**
   * The page's Origin is not allowed. Sent to a client that offers the `tidemark.v1`
   * subprotocol: the upgrade is accepted and closed at once with this code, because a browser
   * sees an HTTP 403 on upgrade only as close 1006. Others get the 403. Final: do not retry.
   */
  OriginRefused: 4403,
  /** No `hello` in time, or no frame within two heartbeats. */
  Timeout: 4408,
  /** An inbound frame over `maxFrameBytes`. */
  FrameTooLarge: 4413,
  /** Too many connections for this principal. */
  TooManyConnections: 4429,
  /** Too many sockets waiting for `hello` (per process or per address); reconnect with backoff. */
  TryAgainLater: 1013,
  /** The server failed; reconnect with backoff. */
  InternalError: 4500,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

// ---- client -> server ----

/** First frame: protocol version and (unless a cookie carries it) the token. */
export interface HelloFrame {
  type: "hello";
  v: number;
  token?: string;
}
export interface SubscribeFrame {
  type: "subscribe";
  /** Chosen by the client, unique per connection (1..128 characters). */
  id: string;
  topic: string;
  tenantId?: string;
  mode: SubscriptionMode;
  /** Hub only: the last cursor the client saw. Absent: start at the current head. */
  cursor?: string;
  /**
   * Hub only, without `cursor` (1.4): start before the tenant's last `last` retained events, or
   * before its first event published at or after `since` (ms since the epoch), at most
   * {@link MAX_INITIAL_EVENTS} of them (the newest). Absent: start at the head.
   */
  initial?: InitialPage;
  /** Hub only (1.4): send this feed's read state (`read_state`) now and on every change. */
  read?: boolean;
}
/** Where a feed with no cursor starts: its tenant's last N events, or those since a time. */
export type InitialPage = { last: number } | { since: number };
/** The most events a first page (`initial`) may ask for. */
export const MAX_INITIAL_EVENTS = 500;
/** The most items a read state holds read one by one above its cursor. */
export const MAX_READ_ITEMS = 100;

/**
 * The principal's read state of a feed (1.4): every event up to `cursor` is read, and so are
 * the events named in `items` above it. `version` grows with every change of the stored state
 * (0: nothing stored); keep the highest version you have seen.
 */
export interface ReadStateWire {
  cursor?: Cursor;
  /** Event ids read one by one above `cursor` (at most {@link MAX_READ_ITEMS}). */
  items: string[];
  version: number;
}
/**
 * Moves the read state of subscription `id` (a hub subscription with `read: true`) for the
 * connection's principal (1.4): `cursor` marks everything up to it read (never moving back),
 * `item` marks one event read (its cursor). Answered by `read_state` with the same `ref`, or an
 * `error` with `id` and `ref`.
 */
export interface MarkReadFrame {
  type: "mark_read";
  id: string;
  /** Chosen by the client (1..64 characters); echoed in the answer. */
  ref: string;
  cursor?: string;
  item?: string;
}
export interface UnsubscribeFrame {
  type: "unsubscribe";
  id: string;
}
/** A fresh token; every subscription is authorized again with it. Answered by `refreshed` or an error. */
export interface RefreshFrame {
  type: "refresh";
  token: string;
}
export interface PingFrame {
  type: "ping";
}
export interface PongFrame {
  type: "pong";
}

export type ClientFrame = HelloFrame | SubscribeFrame | UnsubscribeFrame | RefreshFrame | MarkReadFrame | PingFrame | PongFrame;

// ---- server -> client ----

export interface WelcomeFrame {
  type: "welcome";
  v: number;
  connectionId: string;
  /** The server pings this often; answer `pong` (any frame counts) within two intervals. */
  heartbeatMs: number;
  limits: {
    maxFrameBytes: number;
    maxSubscriptions: number;
    /** Subscribe frames accepted per second (sustained); a burst of twice this is allowed. */
    subscribeRatePerSecond: number;
  };
  /** When the token expires (ms since the epoch), if the server knows; refresh before then. */
  expiresAt?: number;
  /**
   * Opaque, stable id of the authenticated principal (the same on every bridge process). A
   * client keys what it saves per user by it. Added in v1.1; absent from older servers.
   */
  principal?: string;
  /** The protocol revision the server speaks ({@link PROTOCOL_REVISION}); absent before 1.4. */
  revision?: number;
}
/** A `refresh` was accepted; subscriptions the new token may no longer see ended with `unsubscribed`. */
export interface RefreshedFrame {
  type: "refreshed";
  expiresAt?: number;
  /** The principal id of the new token (it may name another principal than before). v1.1. */
  principal?: string;
}
export interface SubscribedFrame {
  type: "subscribed";
  id: string;
  /** Server-assigned hub id: event frames name it, so one frame serves every subscriber. */
  hub: string;
  mode: SubscriptionMode;
}
/** One event of a hub. Identical bytes for every subscriber of that hub. */
export interface EventFrame {
  type: "event";
  hub: string;
  event: TidemarkEvent;
}
/**
 * Replay for subscription `id` has reached the live edge. `cursor` is a watermark: the
 * subscription has seen every event of its tenant up to it; save it to resume from.
 */
export interface CaughtUpFrame {
  type: "caught_up";
  id: string;
  cursor: Cursor;
}
/** The cursor could not be resumed; the subscription continues from `head`. */
export interface ResetFrame {
  type: "reset";
  id: string;
  reason: ResetReason;
  head: Cursor;
  message: string;
}
/**
 * A subscription ended. Without `code` it answers the client's `unsubscribe`; with one the
 * server ended it (revoked access `FORBIDDEN`, expired or revoked token `UNAUTHORIZED`,
 * broker trouble `BROKER_UNAVAILABLE`: subscribe again later with the last cursor).
 */
export interface UnsubscribedFrame {
  type: "unsubscribed";
  id: string;
  code?: ErrorCode;
  message?: string;
}
/**
 * The read state of subscription `id` (1.4): after `subscribed` when it asked `read: true`,
 * again whenever it changes (any connection of the principal, or a server-side write), and as
 * the answer to a `mark_read` (then with its `ref`).
 */
export interface ReadStateFrame {
  type: "read_state";
  id: string;
  ref?: string;
  read: ReadStateWire;
}
/**
 * A request failed; `id` names the subscription when there is one. With `ref`, it answers the
 * `mark_read` of that `ref` (the subscription goes on); without, a subscribe of that `id`.
 */
export interface ErrorFrame {
  type: "error";
  id?: string;
  ref?: string;
  code: ErrorCode;
  message: string;
  /** Set when `code` is `LIMIT_EXCEEDED`. */
  limit?: LimitName;
  /** Set for rate limits: when trying again may succeed. */
  retryAfterMs?: number;
}
/** The server is shutting down: reconnect (to any bridge) after `retryAfterMs`. */
export interface DrainFrame {
  type: "drain";
  retryAfterMs: number;
}

export type ServerFrame =
  | WelcomeFrame
  | RefreshedFrame
  | SubscribedFrame
  | EventFrame
  | CaughtUpFrame
  | ResetFrame
  | UnsubscribedFrame
  | ReadStateFrame
  | ErrorFrame
  | DrainFrame
  | PingFrame
  | PongFrame;
