/**
 * @internal What a `subscribe` frame to an exposed topic may not ask for, checked before
 * `authorize` runs: a valid tenant id, no cursor or first page on a live
 * subscription, and no second subscription to the same topic, tenant and mode. Pure: the
 * connection sends the refusal it returns.
 */
import { ErrorCode, assertTenantId, type SubscribeFrame } from "@tidemark/shared";

/** A refusal of a subscribe frame: its error code and message. */
export interface SubscribeRefusal {
  code: ErrorCode;
  message: string;
}

/** What the check needs of a subscription the connection already has. */
export interface OpenSubscription {
  readonly topicName: string;
  readonly tenantId: string | undefined;
  readonly mode: SubscribeFrame["mode"];
  readonly id: string;
}

/** The refusal of `frame`, or undefined when it may go on to `authorize`. */
export function subscribeRefusal(frame: SubscribeFrame, open: readonly OpenSubscription[]): SubscribeRefusal | undefined {
  const { topic, tenantId, mode, cursor, initial } = frame;
  if (tenantId !== undefined) {
    try {
      assertTenantId(tenantId);
    } catch (err) {
      return { code: ErrorCode.InvalidArgument, message: (err as Error).message };
    }
  }
  if (mode === "live" && cursor !== undefined) return { code: ErrorCode.InvalidArgument, message: "a live subscription takes no cursor" };
  if (mode === "live" && (initial !== undefined || frame.read)) {
    return { code: ErrorCode.InvalidArgument, message: "a live subscription has no first page and no read state" };
  }
  for (const sub of open) {
    if (sub.topicName === topic && sub.tenantId === tenantId && sub.mode === mode) {
      return { code: ErrorCode.InvalidArgument, message: `already subscribed to this topic and tenant as ${JSON.stringify(sub.id)}` };
    }
  }
  return undefined;
}
