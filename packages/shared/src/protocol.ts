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
  InvalidCursor: "invalid_cursor",
  CursorMismatch: "cursor_mismatch",
  RetentionGap: "retention_gap",
} as const;
export type ResetReason = (typeof ResetReason)[keyof typeof ResetReason];

// ---- client -> server ----

/** First frame: protocol version and (unless a cookie carries it) the token. */
export interface HelloFrame { type: "hello"; v: number; token?: string }
export interface SubscribeFrame {
  type: "subscribe";
  /** Chosen by the client, unique per connection. */
  id: string;
  topic: string;
  tenantId?: string;
  mode: SubscriptionMode;
  /** Hub only: the last cursor the client saw. Absent: start at the current head. */
  cursor?: string;
}
export interface UnsubscribeFrame { type: "unsubscribe"; id: string }
/** A fresh token; every subscription is authorized again with it. */
export interface RefreshFrame { type: "refresh"; token: string }
export interface PingFrame { type: "ping" }
export interface PongFrame { type: "pong" }

export type ClientFrame = HelloFrame | SubscribeFrame | UnsubscribeFrame | RefreshFrame | PingFrame | PongFrame;

// ---- server -> client ----

export interface WelcomeFrame {
  type: "welcome";
  v: number;
  connectionId: string;
  heartbeatMs: number;
  limits: { maxFrameBytes: number; maxSubscriptions: number };
}
export interface SubscribedFrame {
  type: "subscribed";
  id: string;
  /** Server-assigned hub id: event frames name it, so one frame serves every subscriber. */
  hub: string;
  mode: SubscriptionMode;
}
/** One event of a hub. Identical bytes for every subscriber of that hub. */
export interface EventFrame { type: "event"; hub: string; event: TidemarkEvent }
/** Replay for subscription `id` has reached the live edge. */
export interface CaughtUpFrame { type: "caught_up"; id: string; cursor: Cursor }
/** The cursor could not be resumed; the subscription continues from `head`. */
export interface ResetFrame { type: "reset"; id: string; reason: ResetReason; head: Cursor; message: string }
/** The server ended a subscription (revoked access, expired token, topic gone). */
export interface UnsubscribedFrame { type: "unsubscribed"; id: string; code: ErrorCode; message: string }
/** A request failed; `id` names the subscription when there is one. */
export interface ErrorFrame { type: "error"; id?: string; code: ErrorCode; message: string }
/** The server is shutting down: reconnect (to any bridge) after `retryAfterMs`. */
export interface DrainFrame { type: "drain"; retryAfterMs: number }

export type ServerFrame =
  | WelcomeFrame
  | SubscribedFrame
  | EventFrame
  | CaughtUpFrame
  | ResetFrame
  | UnsubscribedFrame
  | ErrorFrame
  | DrainFrame
  | PingFrame
  | PongFrame;
