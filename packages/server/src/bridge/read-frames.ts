/**
 * @internal The read-state frames of a connection (protocol 1.4): following the principal's read
 * state of a hub subscription (`subscribe.read`, again after a principal switch), and `mark_read`.
 * Functions over a small view of the connection, which keeps only its rate bucket.
 */
import { ErrorCode, LimitName, SubscriptionMode, toErrorPayload, type MarkReadFrame } from "@tidemark/shared";
import { encode } from "./frames.js";
import { ReadFollow } from "./read-follow.js";
import type { TokenBucket } from "./rate.js";
import type { BridgeContext } from "./context.js";
import type { StateKind } from "./state.js";
import type { Subscription } from "./subscription.js";

/** What the read-state frames use of their connection. */
export interface ReadFramesHost {
  readonly id: string;
  readonly state: StateKind;
  readonly context: Pick<BridgeContext<unknown>, "metrics" | "log">;
  send(text: string): void;
  /** Sends an `error` frame answering request `id`. */
  requestError(code: ErrorCode, message: string, id: string, extra: { limit?: LimitName; retryAfterMs?: number; ref?: string }): void;
}

/** Follows `principalKey`'s read state of `sub` (again, after a principal switch). */
export function followRead<P>(host: ReadFramesHost, sub: Subscription<P>, principalKey: string | undefined): void {
  if (principalKey === undefined) return;
  sub.readFollow?.close();
  const handle = sub.exposed.topic.readState({ principal: principalKey, tenantId: sub.tenantId });
  const follow = new ReadFollow(handle, principalKey, (read, ref) => {
    if (!sub.stopped) host.send(encode({ type: "read_state", id: sub.id, ref, read }));
  });
  sub.readFollow = follow;
  follow.start().catch((err: unknown) => {
    host.context.log("warn", "read state unavailable", { connection: host.id, subscription: sub.id, error: String(err) });
  });
}

/** `mark_read`: the connection's own principal's read state of one of its subscriptions (`sub`). */
export async function markRead<P>(host: ReadFramesHost, frame: MarkReadFrame, sub: Subscription<P> | undefined, rate: TokenBucket): Promise<void> {
  const { id, ref } = frame;
  const refuse = (code: ErrorCode, message: string, extra: { limit?: LimitName; retryAfterMs?: number } = {}) => {
    host.context.metrics.bump(host.context.metrics.rejected, extra.limit ?? code.toLowerCase());
    host.requestError(code, message, id, { ...extra, ref });
  };
  if (host.state !== "open") return refuse(ErrorCode.Unauthorized, "the token expired: send refresh first");
  const retryAfterMs = rate.take(Date.now());
  if (retryAfterMs > 0) return refuse(ErrorCode.LimitExceeded, "marking read too fast", { limit: LimitName.MarkReadRate, retryAfterMs });
  const follow = sub?.readFollow;
  if (!sub || sub.mode !== SubscriptionMode.Hub || !follow) {
    return refuse(ErrorCode.InvalidArgument, `no hub subscription ${JSON.stringify(id)} with read state (subscribe with read: true) on this connection`);
  }
  try {
    const state = frame.cursor !== undefined ? await follow.handle.markRead(frame.cursor) : await follow.handle.markItemRead(frame.item!);
    follow.tell(state, ref);
  } catch (err) {
    const p = toErrorPayload(err);
    refuse(p.code, p.message, p.code === ErrorCode.LimitExceeded ? { limit: LimitName.ReadItems } : {});
  }
}
