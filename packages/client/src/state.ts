/**
 * The connection state machine, pure: one `transition()` decides every change, and the
 * connection applies the action it returns. Per-tab status is derived from it by `tabStatus()`.
 */
import type { ErrorPayload } from "@tidemark/shared";
import { backoffDelay, type BackoffOptions } from "./backoff.js";

/**
 * What a tab shows about its connection. `failed`: the bridge refused in a way a retry cannot
 * get past (see refusal.ts); the client's `state.error` says why, and no retry is made until a
 * tab attaches again (a reload).
 */
export type Status = "connecting" | "live" | "resuming" | "offline" | "failed";

/** State of the one socket. */
export type ConnState =
  | { kind: "idle" }
  | { kind: "connecting"; attempt: number }
  | { kind: "open"; attempt: 0; connectionId: string }
  /** `hinted`: the server named the delay (a `drain` frame); a page made visible does not cut it short. */
  | { kind: "waiting"; attempt: number; delayMs: number; reason: string; hinted?: true }
  | { kind: "offline" }
  | { kind: "failed"; error: ErrorPayload };

/** Things that happen to the socket. */
export type ConnEvent =
  | { type: "start" }
  | { type: "stop" }
  | { type: "welcome"; connectionId: string }
  /** The socket closed or failed; `retryAfterMs` forces a delay (server drain). */
  | { type: "closed"; reason: string; retryAfterMs?: number }
  /** The socket closed with a final refusal (refusal.ts): no retry. */
  | { type: "failed"; error: ErrorPayload }
  | { type: "retry" }
  | { type: "offline" }
  | { type: "online" }
  /** The page became visible again: skip a long wait. */
  | { type: "visible" };

/** What the connection must do after a transition. */
export type ConnAction =
  | { type: "none" }
  | { type: "connect" }
  | { type: "disconnect" }
  | { type: "schedule"; delayMs: number };

export interface Transition {
  state: ConnState;
  action: ConnAction;
}

const none: ConnAction = { type: "none" };

/** The whole state machine. `random` feeds the jitter (tests pass a fixed one). */
export function transition(
  state: ConnState,
  event: ConnEvent,
  backoff: BackoffOptions = {},
  random: () => number = Math.random,
): Transition {
  switch (event.type) {
    case "start":
      // From `failed` too: a tab that attaches (a reload, maybe after a fix) tries again.
      if (state.kind === "idle" || state.kind === "failed") return { state: { kind: "connecting", attempt: 0 }, action: { type: "connect" } };
      return { state, action: none };
    case "stop":
      return { state: { kind: "idle" }, action: state.kind === "idle" ? none : { type: "disconnect" } };
    case "welcome":
      if (state.kind !== "connecting") return { state, action: none };
      return { state: { kind: "open", attempt: 0, connectionId: event.connectionId }, action: none };
    case "closed": {
      if (state.kind !== "connecting" && state.kind !== "open") return { state, action: none };
      // A socket that got as far as `welcome` starts the backoff again from the first step.
      const attempt = state.kind === "open" ? 0 : state.attempt + 1;
      const jittered = backoffDelay(attempt, backoff, random);
      if (event.retryAfterMs === undefined) return { state: { kind: "waiting", attempt, delayMs: jittered, reason: event.reason }, action: { type: "schedule", delayMs: jittered } };
      const delayMs = event.retryAfterMs + jittered;
      return { state: { kind: "waiting", attempt, delayMs, reason: event.reason, hinted: true }, action: { type: "schedule", delayMs } };
    }
    case "failed":
      if (state.kind === "idle" || state.kind === "offline" || state.kind === "failed") return { state, action: none };
      return { state: { kind: "failed", error: event.error }, action: none };
    case "retry":
      if (state.kind !== "waiting") return { state, action: none };
      return { state: { kind: "connecting", attempt: state.attempt }, action: { type: "connect" } };
    case "offline":
      if (state.kind === "idle" || state.kind === "offline" || state.kind === "failed") return { state, action: none };
      return { state: { kind: "offline" }, action: { type: "disconnect" } };
    case "online":
      if (state.kind === "offline") return { state: { kind: "connecting", attempt: 0 }, action: { type: "connect" } };
      if (state.kind === "waiting") return { state: { kind: "connecting", attempt: state.attempt }, action: { type: "connect" } };
      return { state, action: none };
    case "visible":
      // Only cut a long wait short; a short one is left to run so a flapping page does not hammer.
      // A wait the server asked for (drain: shutting down, or too busy for this socket) is kept.
      if (state.kind === "waiting" && state.delayMs > 2_000 && !state.hinted) {
        return { state: { kind: "connecting", attempt: state.attempt }, action: { type: "connect" } };
      }
      return { state, action: none };
  }
}

/**
 * A tab's status from the socket state and its own feeds.
 * `wasLive`: the engine has been live before (so a new connection is a resume).
 * `caughtUp`: every hub feed of the tab has replayed up to the live edge on this connection.
 */
export function tabStatus(state: ConnState, wasLive: boolean, caughtUp: boolean): Status {
  switch (state.kind) {
    case "failed":
      return "failed";
    case "offline":
    case "waiting":
      return "offline";
    case "idle":
    case "connecting":
      return wasLive ? "resuming" : "connecting";
    case "open":
      if (caughtUp) return "live";
      return wasLive ? "resuming" : "connecting";
  }
}
