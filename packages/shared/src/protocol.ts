/**
 * The bridge wire protocol, version 1: JSON text frames told apart by `type`.
 * `docs/protocol.md` is the prose description; this file is the source of truth for shapes.
 */
import type { Cursor } from "./cursor.js";
import type { ErrorCode } from "./errors.js";
import type { TidemarkEvent } from "./envelope.js";

export const PROTOCOL_VERSION = 1;
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

export type ClientFrame = HelloFrame | SubscribeFrame | UnsubscribeFrame | RefreshFrame | PingFrame | PongFrame;

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
/** A request failed; `id` names the subscription when there is one. */
export interface ErrorFrame {
  type: "error";
  id?: string;
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
  | ErrorFrame
  | DrainFrame
  | PingFrame
  | PongFrame;
