/**
 * @internal Live fan-out of one hub (mode, topic, tenant) to every caught-up subscription of
 * this bridge: ONE iteration of the hub per hub key instead of one per socket, each event's
 * frame built once and handed to every member in one synchronous loop (no async iterator step,
 * promise or closure per socket and event; an idle member holds no suspended generator).
 *
 * A subscription runs its own hub iteration (replay after its cursor, backpressure waits,
 * errors, resets: subscription.ts) and offers itself here each time it reaches the live edge.
 * It joins when the group has sent no event it has not seen (the group's last event is at or
 * before its position); it skips events at or before its position (a head read newer than the
 * group's). It leaves — back to its own iteration from its cursor — when its socket's buffer is
 * over the bound, and every member leaves when the group's iteration ends (an error, the hub
 * closed), so errors reach each subscription on the path that handles them.
 */
import type { Cursor, TidemarkEvent } from "@tidemark/shared";
import { Cancellation } from "../hub/cancellation.js";
import type { HubProgress } from "../hub/contract.js";
import { incarnationOf, sameIncarnation } from "../hub/incarnation.js";
import type { FrameText } from "./socket.js";
import type { EventFrames } from "./frames.js";
import type { BridgeMetrics } from "./metrics.js";
import type { HubSource } from "./types.js";
import type { ExposedTopic } from "./options.js";
import type { HubIds } from "./hub-ids.js";

/** @internal A subscription as the group sees it. */
export interface GroupMember {
  readonly hubKey: string;
  readonly hubId: string;
  readonly tenantId: string | undefined;
  readonly exposed: Pick<ExposedTopic<unknown>, "topic">;
  /** Stream sequence of the last event or watermark sent to the client. */
  readonly position: number;
  canSend(): boolean;
  /** Sends a shared event frame (the group checked the position; it counts the delivery). */
  deliverShared(frame: FrameText, event: TidemarkEvent): void;
  /** Sends `caught_up` with a newer watermark. */
  groupCaughtUp(cursor: Cursor, position: number): void;
  /**
   * Ends the member's own iteration: the group delivers from now on. `cursor` is the group's
   * cursor string: a member at the same cursor keeps that one copy instead of its own.
   */
  joinedGroup(cursor: Cursor): void;
  /** The group stopped delivering to it: go on with an own iteration from its cursor. */
  leftGroup(): void;
}

type GroupContext = { readonly hubOf: HubSource; readonly hubIds: HubIds; readonly frames: EventFrames; readonly metrics: BridgeMetrics };

class HubGroup implements HubProgress {
  readonly members = new Set<GroupMember>();
  /** Offered while the group's iteration had not reached the live edge yet. */
  readonly candidates = new Set<GroupMember>();
  /** Watermark: every event of the hub up to it was delivered to the members. */
  position: number;
  /** The last event delivered (or the start position, before which the group knows nothing). */
  lastEvent: number;
  /** The cursor of `position`. */
  cursor: Cursor;
  ready = false;
  ended = false;
  readonly incarnation: string | undefined;
  readonly cancel = new Cancellation();
  /**
   * The hub id its frames name. The group holds it (a reference in HubIds) for as long as it runs:
   * its first member may leave before it is ready, and a subscription that joins later must have
   * been given the same id, not a fresh one for a key whose count dropped to zero meanwhile.
   */
  readonly hubId: string;

  constructor(
    readonly groups: HubGroups,
    readonly key: string,
    readonly first: GroupMember,
    readonly start: Cursor,
    hubIds: HubIds,
  ) {
    this.hubId = hubIds.acquire(key).id;
    this.position = this.lastEvent = first.position;
    this.cursor = start;
    this.incarnation = incarnationOf(start);
    this.candidates.add(first);
  }

  accepts(member: GroupMember, cursor: Cursor): boolean {
    return this.ready && !this.ended && this.lastEvent <= member.position && sameIncarnation(incarnationOf(cursor), this.incarnation);
  }

  /** HubProgress of the group's own iteration: the first call means it is at the live edge. */
  onCaughtUp(cursor: Cursor): void {
    if (this.ended) return;
    const position = this.first.exposed.topic.cursorSequence(cursor);
    if (position > this.position) {
      this.position = position;
      this.cursor = cursor;
      for (const m of this.members) if (position > m.position) m.groupCaughtUp(cursor, position);
    }
    if (this.ready) return;
    this.ready = true;
    for (const m of this.candidates) if (this.lastEvent <= m.position) this.#add(m);
    this.candidates.clear();
    if (this.members.size === 0) this.groups.end(this);
  }

  add(member: GroupMember): void {
    this.#add(member);
  }

  #add(member: GroupMember): void {
    this.members.add(member);
    member.joinedGroup(this.cursor);
  }

  deliver(event: TidemarkEvent, { frames, metrics }: GroupContext): void {
    const seq = event.streamSequence;
    if (seq <= this.lastEvent) return;
    this.lastEvent = seq;
    if (seq > this.position) {
      this.position = seq;
      this.cursor = event.cursor;
    }
    const frame = frames.frame(this.hubId, event);
    const lag = Math.max(0, Date.now() - event.publishedAt) / 1000;
    let sent = 0;
    for (const m of this.members) {
      if (seq <= m.position) continue;
      if (!m.canSend()) {
        // Full buffer: it waits and catches up on its own; the others go on.
        this.members.delete(m);
        m.leftGroup();
        continue;
      }
      m.deliverShared(frame, event);
      sent++;
    }
    // Counted once per event for all its sockets: the loop above is only the sends.
    if (sent === 0) return;
    metrics.eventsDelivered += sent;
    metrics.observeLag(lag, sent);
  }
}

/** @internal The hub groups of one bridge, by hub key. */
export class HubGroups {
  readonly #groups = new Map<string, HubGroup>();
  readonly #context: GroupContext;

  constructor(context: GroupContext) {
    this.#context = context;
  }

  /** Groups running (for metrics and tests). */
  get size(): number {
    return this.#groups.size;
  }

  /**
   * `member`'s own iteration reached the live edge at `cursor` (its position). Joins the group
   * when it can (calling `member.joinedGroup()`), else starts a group there if none runs.
   */
  offer(member: GroupMember, cursor: Cursor): void {
    const group = this.#groups.get(member.hubKey);
    if (!group) {
      this.#start(member, cursor);
      return;
    }
    if (group.accepts(member, cursor)) group.add(member);
    else if (!group.ready && !group.ended && sameIncarnation(incarnationOf(cursor), group.incarnation)) group.candidates.add(member);
  }

  /** The member stopped (unsubscribed, closed). */
  leave(member: GroupMember): void {
    const group = this.#groups.get(member.hubKey);
    if (!group) return;
    group.candidates.delete(member);
    if (group.members.delete(member) && group.members.size === 0 && group.ready) this.end(group);
  }

  /** Ends a group's iteration; its members go back to their own. */
  end(group: HubGroup): void {
    if (group.ended) return;
    group.ended = true;
    group.cancel.abort();
    this.#context.hubIds.release(group.key);
    if (this.#groups.get(group.key) === group) this.#groups.delete(group.key);
    const members = [...group.members];
    group.members.clear();
    group.candidates.clear();
    for (const m of members) m.leftGroup();
  }

  #start(first: GroupMember, cursor: Cursor): void {
    const group = new HubGroup(this, first.hubKey, first, cursor, this.#context.hubIds);
    this.#groups.set(group.key, group);
    const hub = this.#context.hubOf(first.exposed.topic, first.tenantId);
    const context = this.#context;
    void (async () => {
      for await (const batch of hub.subscribeBatches({ after: cursor, cancel: group.cancel, progress: group })) {
        for (const event of batch) {
          if (group.ended) return;
          group.deliver(event, context);
        }
      }
    })()
      .catch(() => undefined) // each member meets the error again on its own iteration
      .finally(() => this.end(group));
  }
}
