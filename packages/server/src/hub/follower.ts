/**
 * One hub's shared follower: a single `topic.follow()` per (topic, tenant) feeding a bounded
 * ring of recent events that every attached subscriber reads at its own pace. The follower
 * never waits for a subscriber; a subscriber the ring leaves behind catches up by replay.
 */
import { ErrorCode, isTidemarkError, TidemarkError, type TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { Ring } from "./ring.js";

/** Retries of the follower after broker trouble before its subscribers get the error (~30 s). */
const MAX_RETRIES = 10;

/** @internal Resolved hub settings. */
export interface HubSettings {
  ringEvents: number;
  ringBytes: number;
  maxBackfillSequences: number;
  sizeOf: (event: TidemarkEvent) => number;
}

/** @internal */
export class Follower<T = unknown> {
  readonly topic: Topic<T>;
  readonly tenantId: string | undefined;
  /** Attached and catching-up subscribers; the follower retires when it drops to zero. */
  members = 0;
  /** Set once the follower has started: events above `ring.floor` are in the ring. */
  ring: Ring<T> | undefined;
  /** True once the follower has reached the head read at its start (backfill done). */
  live = false;
  /** Every event of the tenant up to this sequence has been pushed into the ring. */
  watermark = 0;
  /** Terminal failure of the follower; subscribers drain the ring, then get it. */
  error: unknown;
  /** Called once when the follower fails or is retired. */
  onEnd: (() => void) | undefined;
  readonly #settings: HubSettings;
  readonly #abort = new AbortController();
  #last = 0;
  #tick = deferred();

  constructor(topic: Topic<T>, tenantId: string | undefined, settings: HubSettings) {
    this.topic = topic;
    this.tenantId = tenantId;
    this.#settings = settings;
  }

  get retired(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Resolves at the next push, failure or retirement. */
  changed(): Promise<void> {
    return this.#tick.promise;
  }

  /**
   * Starts following unless already started. The first subscriber's position seeds the start
   * (if it is within `maxBackfillSequences` of the head), so a fresh hub whose first subscribers
   * resume a little behind serves them from the ring instead of one replay each.
   */
  start(position: number, headSequence: number): void {
    if (this.ring) return;
    const from = headSequence - position <= this.#settings.maxBackfillSequences ? Math.min(position, headSequence) : headSequence;
    this.ring = new Ring<T>(from, this.#settings.ringEvents, this.#settings.ringBytes);
    this.watermark = from;
    this.#last = from;
    void this.#run(from, headSequence);
  }

  /** Wakes every waiting subscriber (one of them was aborted). */
  poke(): void {
    this.#wake();
  }

  /** Stops the follower (its last subscriber left). */
  retire(): void {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    this.#wake();
    this.onEnd?.();
  }

  async #run(from: number, head: number): Promise<void> {
    const { topic, tenantId } = this;
    const signal = this.#abort.signal;
    let failures = 0;
    // Broker trouble (a timeout, a reconnect) is retried here, from the last event pushed, so
    // that it does not fail every subscriber at once and send them all back at the broker.
    const retry = async (err: unknown): Promise<void> => {
      if (!isTidemarkError(err) || err.code !== ErrorCode.BrokerUnavailable || failures >= MAX_RETRIES) throw err;
      failures++;
      await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** failures) * (0.5 + Math.random() / 2)));
    };
    try {
      let backfilled = from >= head;
      while (!backfilled && !signal.aborted) {
        try {
          const backlog = topic.replay({ after: topic.cursorAt(this.#last), until: topic.cursorAt(head), tenantId, signal });
          for await (const event of backlog) {
            this.#push(event);
            failures = 0;
          }
          backfilled = true;
        } catch (err) {
          if (signal.aborted) return;
          // The seeding cursor was overtaken by retention: start at the head instead; the
          // subscribers below it fall back to their own replay and get their own gap.
          if (isTidemarkError(err) && err.code === ErrorCode.RetentionGap) {
            this.ring!.reset(head);
            this.#last = head;
            backfilled = true;
          } else await retry(err);
        }
      }
      if (signal.aborted) return;
      this.live = true;
      if (head > this.watermark) this.watermark = head;
      this.#wake();
      while (!signal.aborted) {
        try {
          const after = topic.cursorAt(Math.max(this.#last, head));
          for await (const event of topic.follow({ after, tenantId, signal })) {
            this.#push(event);
            failures = 0;
          }
          if (!signal.aborted) throw new TidemarkError(ErrorCode.BrokerUnavailable, "the hub's follower ended unexpectedly");
        } catch (err) {
          if (signal.aborted) return;
          await retry(err);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      this.error = err;
      this.#abort.abort();
      this.#wake();
      this.onEnd?.();
    }
  }

  #push(event: TidemarkEvent<T>): void {
    if (event.streamSequence <= this.#last) return;
    this.#last = event.streamSequence;
    this.ring!.push(event, this.#settings.sizeOf(event));
    if (event.streamSequence > this.watermark) this.watermark = event.streamSequence;
    this.#wake();
  }

  #wake(): void {
    const tick = this.#tick;
    this.#tick = deferred();
    tick.resolve();
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
