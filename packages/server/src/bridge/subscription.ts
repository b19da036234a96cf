/**
 * One subscription of a connection. Hub mode reads the process's shared hub (replay after the
 * cursor, then live; reset from the head on a bad or expired cursor) and pauses while the
 * socket's buffer is full — it ends its iteration (a replay's consumer and what it prefetched go
 * with it), the hub leaves it behind, and it catches up from its cursor once the socket drains.
 * Live mode reads `topic.live()` and drops events while paused.
 *
 * It sees its connection only through `SubscriptionSink` and the bridge only through
 * `SubscriptionContext`, so it can be driven by fakes (subscription.test.ts).
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
import { Cancellation } from "../hub/cancellation.js";
import type { HubProgress, LiveSink } from "../hub/contract.js";
import type { ExposedTopic } from "./options.js";
import type { BridgeContext } from "./context.js";
import type { FrameText } from "./socket.js";
import { encode } from "./frames.js";
import { BrokerRetry } from "../hub/retry.js";
import type { ReadFollow } from "./read-follow.js";

const resetReasons: Partial<Record<string, ResetReason>> = {
  [ErrorCode.InvalidCursor]: ResetReason.InvalidCursor,
  [ErrorCode.CursorMismatch]: ResetReason.CursorMismatch,
  [ErrorCode.RetentionGap]: ResetReason.RetentionGap,
};

/**
 * How long a full send buffer may keep a hub iteration before the subscription lets it go, once
 * the socket has shown it reads (its last READING_STREAK pauses each drained within this). A
 * buffer that drains within it is flow control (a catch-up read faster than the network): the
 * iteration goes on, with no new replay. A socket that has not shown that (a new one, or one
 * whose grace ran out or whose pause lasted longer) lets its iteration go at once: it waits
 * holding no consumer and no prefetched events, and resumes from its cursor.
 */
const PAUSE_GRACE_MS = 1_000;

/**
 * Quick drains in a row before a socket counts as reading. One is not enough: the kernel's
 * buffers of a socket that does not read still take a few hundred KB, so its first drains are
 * quick too, and a grace then holds a replay's prefetched events for nothing.
 */
const READING_STREAK = 2;

/** True when `drained` settles within `ms`. */
async function drainedWithin(drained: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([drained.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** @internal What a subscription uses of its connection. */
export interface SubscriptionSink<P = unknown> {
  /** The connection's id, for logs. */
  readonly id: string;
  /** Sends a reply frame (caught_up, reset). */
  send(text: string): void;
  /** Sends an event frame shared with other connections. */
  sendFrame(frame: FrameText): void;
  /** False while the send buffer is over the bound (backpressure). */
  canSend(): boolean;
  /** Resolves once the send buffer drained after `canSend()` said false. */
  writable(): Promise<void>;
  /** Ends the subscription with `unsubscribed` and this code (it failed). */
  endSubscription(sub: Subscription<P>, code: ErrorCode | undefined, message: string | undefined): void;
}

/** @internal What a subscription uses of the bridge. */
export type SubscriptionContext = Pick<BridgeContext<unknown>, "hubIds" | "hubOf" | "frames" | "metrics" | "log">;

/**
 * @internal Hub mode: the subscription's own iteration of the hub replays and catches up; at the
 * live edge the hub takes it into its live fan-out as a sink (`live` of the hub's subscribe
 * options), which hands each event to every caught-up sink at once; when its buffer is full the
 * hub detaches it and it catches up on its own again, from its cursor.
 */
export class Subscription<P = unknown> implements HubProgress, LiveSink {
  readonly id: string;
  readonly topicName: string;
  readonly tenantId: string | undefined;
  readonly mode: SubscriptionMode;
  readonly exposed: ExposedTopic<P>;
  readonly hubKey: string;
  readonly hubId: string;
  /** The last cursor sent to the client (event or caught_up): where an own iteration resumes. */
  cursor: string | undefined;
  /** Stream sequence of `cursor` (-1 before the first). */
  position = -1;
  /** Its read state on the wire, when the client asked for it (hub mode, `subscribe.read`). */
  readFollow: ReadFollow | undefined;
  readonly #sink: SubscriptionSink<P>;
  readonly #context: SubscriptionContext;
  /** Set by `stop()`. A hub subscription needs no more: its own iterations have their Cancellation. */
  #stopped = false;
  /** Live mode's iteration's signal (an AbortController's EventTarget costs ~1 KB: live mode only). */
  #live: AbortController | undefined;
  /** Retries of its own reads after broker trouble (made on the first); reset when it catches up. */
  #retry: BrokerRetry | undefined;
  /**
   * The own iteration of the hub (hub mode), and then its place in the hub's live fan-out:
   * aborting it ends either.
   */
  #own: Cancellation | undefined;
  /**
   * Set when an own iteration takes over from the fan-out (full buffer): reaching the live edge
   * again without a replay or reset is not news, as when a paused iteration goes on.
   */
  #quiet = false;
  /** True since the own iteration reached the live edge (and told the client), until a replay or reset. */
  #atEdge = false;
  /** Pauses in a row that drained within PAUSE_GRACE_MS: from READING_STREAK on, a pause may keep the iteration. */
  #quickDrains = 0;

  constructor(
    sink: SubscriptionSink<P>,
    context: SubscriptionContext,
    init: { id: string; topicName: string; tenantId: string | undefined; mode: SubscriptionMode; exposed: ExposedTopic<P> },
  ) {
    this.#sink = sink;
    this.#context = context;
    this.id = init.id;
    this.topicName = init.topicName;
    this.tenantId = init.tenantId;
    this.mode = init.mode;
    this.exposed = init.exposed;
    const hub = context.hubIds.acquire(`${init.mode}\u0000${init.topicName}\u0000${init.tenantId ?? ""}`);
    this.hubKey = hub.key;
    this.hubId = hub.id;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Starts delivering; runs until stopped or failed. */
  start(cursor: string | undefined): void {
    const run = this.mode === SubscriptionMode.Hub ? this.#runHub(cursor) : this.#runLive();
    run.catch((err) => this.#fail(err));
  }

  /** Stops delivering (no frame sent). Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.readFollow?.close();
    this.#live?.abort();
    this.#own?.abort();
    this.#context.hubIds.release(this.hubKey);
  }

  /** @internal HubProgress of the own iteration: at the live edge (the hub then attaches it). */
  onCaughtUp(cursor: Cursor): void {
    if (this.#stopped) return;
    this.#retry?.progress();
    let position: number;
    try {
      position = this.exposed.topic.cursorSequence(cursor);
    } catch {
      position = -1; // not a cursor of this topic's format
    }
    const quiet = this.#quiet && position <= this.position;
    this.#quiet = false;
    this.#atEdge = true;
    this.cursor = cursor;
    if (position > this.position) this.position = position;
    if (!quiet) this.#sink.send(encode({ type: "caught_up", id: this.id, cursor }));
  }

  /** @internal LiveSink */
  canTake(): boolean {
    return this.#sink.canSend();
  }

  /** @internal LiveSink: the next event from the hub's live fan-out. */
  take(event: TidemarkEvent): void {
    this.#deliver(event);
  }

  /** @internal LiveSink: a newer watermark while idle (the cursor string is the hub's, shared). */
  caughtUp(cursor: Cursor, position: number): void {
    this.cursor = cursor;
    this.position = position;
    this.#sink.send(encode({ type: "caught_up", id: this.id, cursor }));
  }

  /**
   * @internal LiveSink: out of the fan-out (full buffer, or the hub's follower ended, with its
   * failure if it failed: handled as its own iteration's).
   */
  detached(error?: unknown): void {
    if (this.#stopped) return;
    this.#quiet = true;
    this.#runHub(this.cursor, error).catch((err) => this.#fail(err));
  }

  /** @internal HubProgress: fell behind the hub's window and replays. */
  onReplay(): void {
    this.#quiet = false; // fell behind the window: the caught_up after the replay is news
    this.#atEdge = false;
    this.#context.metrics.replays++;
  }

  async #runHub(initial: string | undefined, failure?: unknown): Promise<void> {
    const context = this.#context;
    const signal = new Cancellation();
    this.#own = signal;
    if (this.#stopped) signal.abort();
    let after = initial;
    this.#retry?.progress();
    while (!signal.aborted) {
      try {
        if (failure !== undefined) {
          const err = failure;
          failure = undefined;
          throw err;
        }
        // Paused (a full send buffer): wait holding no iteration of the hub, so no replay
        // consumer and no prefetched events; a sink the hub detached for a full buffer waits here.
        if (!this.#sink.canSend()) {
          const pausedAt = Date.now();
          await this.#sink.writable();
          this.#quickDrains = Date.now() - pausedAt < PAUSE_GRACE_MS ? this.#quickDrains + 1 : 0;
          continue;
        }
        const hub = this.#context.hubOf(this.exposed.topic, this.tenantId);
        // In arrays (one iteration step each), but the buffer is still checked before every
        // frame: a slow socket pauses (or is cut by the sink) exactly as with single events.
        const batches = hub.subscribeBatches({ after, cancel: signal, progress: this, live: this });
        let paused = false;
        read: for await (const batch of batches) {
          for (const event of batch) {
            if (signal.aborted) return;
            if (!this.#sink.canSend() && !(this.#quickDrains >= READING_STREAK && (await drainedWithin(this.#sink.writable(), PAUSE_GRACE_MS)))) {
              if (this.#quickDrains >= READING_STREAK) this.#quickDrains = 0; // its grace ran out: a stall
              paused = true;
              break read; // ends the iteration: its replay's consumer is deleted, its events dropped
            }
            if (signal.aborted) return;
            this.#deliver(event);
          }
          this.#retry?.progress();
        }
        // Ended without a pause: the hub took the subscription into its live fan-out.
        if (!paused) return;
        // Resume after the last cursor sent, once drained. Back at the live edge without a
        // replay is no news to a client that had its caught_up already.
        after = this.cursor ?? after;
        this.#quiet = this.#atEdge;
      } catch (err) {
        if (signal.aborted) return;
        const code = isTidemarkError(err) ? err.code : undefined;
        // The broker was slow or away for a read of its own (a head read, a catch-up replay):
        // resume from where the subscription was, on the retry rule, instead of ending it (the
        // client would only subscribe again with the same cursor). Trouble the hub's follower
        // already retried for the whole budget is passed on.
        const delay = code === ErrorCode.BrokerUnavailable ? (this.#retry ??= new BrokerRetry()).delayFor(err) : undefined;
        if (delay !== undefined) {
          context.metrics.subscriptionRetries++;
          context.log("info", "subscription retrying", { connection: this.#sink.id, subscription: this.id, topic: this.topicName, delayMs: Math.round(delay), error: (err as Error).message });
          await new Promise((r) => setTimeout(r, delay));
          after = this.cursor ?? after;
          continue;
        }
        const reason = code ? resetReasons[code] : undefined;
        if (!reason) throw this.#retry ? this.#retry.passOn(err) : err;
        const head = await this.exposed.topic.head();
        if (signal.aborted) return;
        context.metrics.bump(context.metrics.resets, reason);
        context.log("info", "subscription reset", { connection: this.#sink.id, subscription: this.id, topic: this.topicName, reason });
        this.position = -1; // a re-created stream counts from 1 again
        this.cursor = head; // the client goes on from the reset's head: so do a pause and a retry
        this.#quiet = false;
        this.#atEdge = false;
        this.#sink.send(encode({ type: "reset", id: this.id, reason, head, message: (err as Error).message }));
        after = head;
      }
    }
  }

  async #runLive(): Promise<void> {
    const context = this.#context;
    this.#live = new AbortController();
    const signal = this.#live.signal;
    if (this.#stopped) this.#live.abort();
    for await (const event of this.exposed.topic.live({ tenantId: this.tenantId, signal })) {
      if (signal.aborted) return;
      if (!this.#sink.canSend()) {
        context.metrics.liveEventsDropped++;
        continue;
      }
      this.#deliver(event);
    }
  }

  #deliver(event: TidemarkEvent): void {
    const context = this.#context;
    this.#sink.sendFrame(context.frames.frame(this.hubId, event));
    this.cursor = event.cursor;
    this.position = event.streamSequence;
    context.metrics.delivered(event);
  }

  #fail(err: unknown): void {
    if (this.#stopped) return;
    const payload = toErrorPayload(err);
    this.#context.log("warn", "subscription failed", {
      connection: this.#sink.id,
      subscription: this.id,
      topic: this.topicName,
      code: payload.code,
      error: payload.message,
    });
    this.#sink.endSubscription(this, payload.code, payload.message);
  }
}
