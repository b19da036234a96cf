/**
 * One subscription of a connection. Hub mode reads the process's shared hub (replay after the
 * cursor, then live; reset from the head on a bad or expired cursor) and pauses while the
 * socket's buffer is full — the hub leaves it behind and it catches up from its position later.
 * Live mode reads `topic.live()` and drops events while paused.
 */
import {
  ErrorCode,
  ResetReason,
  SubscriptionMode,
  isTidemarkError,
  toErrorPayload,
  type Cursor,
  type TidemarkEvent,
} from "@tidemark/shared";
import type { Hub } from "../core/types.js";
import { Cancellation, SharedHub, type HubProgress } from "../hub/registry.js";
import type { ExposedTopic } from "./options.js";
import type { Connection } from "./connection.js";
import { encode } from "./frames.js";

const resetReasons: Partial<Record<string, ResetReason>> = {
  [ErrorCode.InvalidCursor]: ResetReason.InvalidCursor,
  [ErrorCode.CursorMismatch]: ResetReason.CursorMismatch,
  [ErrorCode.RetentionGap]: ResetReason.RetentionGap,
};

/** Retries after BROKER_UNAVAILABLE before the subscription ends (about a minute of backoff). */
const MAX_RETRIES = 15;

/** @internal */
export class Subscription<P = unknown> implements HubProgress {
  readonly id: string;
  readonly topicName: string;
  readonly tenantId: string | undefined;
  readonly mode: SubscriptionMode;
  readonly exposed: ExposedTopic<P>;
  readonly hubKey: string;
  readonly hubId: string;
  /** The last cursor sent to the client (event or caught_up), for logs. */
  cursor: string | undefined;
  readonly #conn: Connection<P>;
  // Not an AbortController: at 10,000 subscriptions its EventTarget machinery costs ~1 KB each.
  readonly #cancel = new Cancellation();
  /** Consecutive retries after broker trouble; reset when the subscription catches up. */
  #retries = 0;

  constructor(conn: Connection<P>, init: { id: string; topicName: string; tenantId: string | undefined; mode: SubscriptionMode; exposed: ExposedTopic<P> }) {
    this.#conn = conn;
    this.id = init.id;
    this.topicName = init.topicName;
    this.tenantId = init.tenantId;
    this.mode = init.mode;
    this.exposed = init.exposed;
    this.hubKey = `${init.mode}\u0000${init.topicName}\u0000${init.tenantId ?? ""}`;
    this.hubId = conn.core.hubIds.acquire(this.hubKey);
  }

  get stopped(): boolean {
    return this.#cancel.aborted;
  }

  /** Starts delivering; runs until stopped or failed. */
  start(cursor: string | undefined): void {
    const run = this.mode === SubscriptionMode.Hub ? this.#runHub(cursor) : this.#runLive();
    run.catch((err) => this.#fail(err));
  }

  /** Stops delivering (no frame sent). Idempotent. */
  stop(): void {
    if (this.#cancel.aborted) return;
    this.#cancel.abort();
    this.#conn.core.hubIds.release(this.hubKey);
  }

  #hub(): Hub<unknown> {
    const hub = this.exposed.topic.hub({ tenantId: this.tenantId }) as Hub<unknown>;
    return hub instanceof SharedHub ? hub : this.#conn.core.fallbackHubs.get(this.exposed.topic, this.tenantId);
  }

  /** @internal HubProgress: the replay reached the live edge. */
  onCaughtUp(cursor: Cursor): void {
    if (this.#cancel.aborted) return;
    this.#retries = 0;
    this.cursor = cursor;
    this.#conn.send(encode({ type: "caught_up", id: this.id, cursor }));
  }

  /** @internal HubProgress: fell behind the hub's window and replays. */
  onReplay(): void {
    this.#conn.core.metrics.replays++;
  }

  async #runHub(initial: string | undefined): Promise<void> {
    const { core } = this.#conn;
    const signal = this.#cancel;
    let after = initial;
    this.#retries = 0;
    while (!signal.aborted) {
      try {
        const hub = this.#hub() as SharedHub<unknown>;
        const events = hub.subscribe({ after, cancel: signal, progress: this });
        for await (const event of events) {
          if (!this.#conn.canSend()) await this.#conn.writable();
          if (signal.aborted) return;
          this.#deliver(event);
        }
        return;
      } catch (err) {
        if (signal.aborted) return;
        const code = isTidemarkError(err) ? err.code : undefined;
        // The broker was slow or away: resume from where the subscription was, with backoff,
        // instead of ending it (the client would only subscribe again with the same cursor).
        if (code === ErrorCode.BrokerUnavailable && this.#retries < MAX_RETRIES) {
          const retries = ++this.#retries;
          core.metrics.subscriptionRetries++;
          const delay = Math.min(5_000, 100 * 2 ** retries) * (0.5 + Math.random() / 2);
          core.log("info", "subscription retrying", { connection: this.#conn.id, subscription: this.id, topic: this.topicName, delayMs: Math.round(delay), error: (err as Error).message });
          await new Promise((r) => setTimeout(r, delay));
          after = this.cursor ?? after;
          continue;
        }
        const reason = code ? resetReasons[code] : undefined;
        if (!reason) throw err;
        const head = await this.exposed.topic.head();
        if (signal.aborted) return;
        core.metrics.bump(core.metrics.resets, reason);
        core.log("info", "subscription reset", { connection: this.#conn.id, subscription: this.id, topic: this.topicName, reason });
        this.#conn.send(encode({ type: "reset", id: this.id, reason, head, message: (err as Error).message }));
        after = head;
      }
    }
  }

  async #runLive(): Promise<void> {
    const { core } = this.#conn;
    const signal = this.#cancel.signal;
    for await (const event of this.exposed.topic.live({ tenantId: this.tenantId, signal })) {
      if (signal.aborted) return;
      if (!this.#conn.canSend()) {
        core.metrics.liveEventsDropped++;
        continue;
      }
      this.#deliver(event);
    }
  }

  #deliver(event: TidemarkEvent): void {
    const { core } = this.#conn;
    this.#conn.sendFrame(core.frames.frame(this.hubId, event));
    this.cursor = event.cursor;
    core.metrics.eventsDelivered++;
    core.metrics.observeLag(Math.max(0, Date.now() - event.publishedAt) / 1000);
  }

  #fail(err: unknown): void {
    if (this.#cancel.aborted) return;
    const payload = toErrorPayload(err);
    this.#conn.core.log("warn", "subscription failed", {
      connection: this.#conn.id,
      subscription: this.id,
      topic: this.topicName,
      code: payload.code,
      error: payload.message,
    });
    this.#conn.endSubscription(this, payload.code, payload.message);
  }
}
