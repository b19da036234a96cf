/**
 * The process() worker: pulls from a durable consumer, runs the handler with bounded
 * concurrency, keeps leases of held events alive, retries on the backoff with `nak(delay)`,
 * dead-letters after `maxAttempts`, and drains on `stop()`.
 */
import type { Consumer, ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { eventIdFor, type TidemarkEvent } from "@tidemark/shared";
import type { ProcessEvent, Worker } from "../core/types.js";
import type { WorkerContext } from "./worker-context.js";
import { decodeDeadLetterRecord, describeError } from "./dead-letter-record.js";
import { retryDelay } from "./options.js";
import { removeRedriven, sendVerdict, storeDeadLetter, type Held, type SourceKind } from "./verdicts.js";
import { stopTimeout, stopTimeoutError, withDeadline, type HandlerRun, type WorkerStopOptions } from "./stopping.js";
import { LeaseKeeper } from "./lease.js";
import { inHandlerSpan } from "../observe/trace.js";

/** Longest wait of one pull request; an idle worker sends one per source this often. */
const FETCH_EXPIRES_MS = 5_000;
/** Pause after a failed pull (broker away, consumer deleted) before the next. */
const PULL_RETRY_MS = 1_000;
/** Prefetch aims to hold no more queued events than the worker starts in this time. */
const PREFETCH_BUDGET_MS = 100;
const MAX_PREFETCH = 256;
/** Batch of the redrive source's pulls (redriven letters are rare). */
const REDRIVE_BATCH = 16;
const REDRIVE_POLL_MS = 100;

/** @internal A running worker; `startWorker()` builds it. */
export class ProcessWorker<T> implements Worker {
  readonly consumer: string;
  readonly #ctx: WorkerContext<T>;
  #running = true;
  /** A stop's deadline passed: events that still arrive are handed back at once. */
  #abandoned = false;
  #stopping: Promise<void> | undefined;
  readonly #held = new Set<Held>();
  readonly #queue: Held[] = [];
  #inFlight = 0;
  #requested = 0;
  #avgHandlerMs = Number.NaN;
  readonly #fetches = new Set<ConsumerMessages>();
  readonly #waiters = new Set<() => void>();
  /** Resolved when the last held event is released (the drain waits on it). */
  readonly #idleWaiters: (() => void)[] = [];
  /** Handlers running now, by delivery: what a stop that times out names. */
  readonly #runs = new Map<Held, HandlerRun>();
  readonly #lease: LeaseKeeper;
  readonly #loops: Promise<void>[];

  constructor(ctx: WorkerContext<T>) {
    this.#ctx = ctx;
    this.consumer = ctx.options.consumer;
    // Every held event (queued or running) keeps its lease while this worker lives.
    this.#lease = new LeaseKeeper(ctx.leaseMs, this.#held, () => ctx.nc.isClosed());
    this.#loops = [this.#pullEvents(), this.#pullRedrive()];
  }

  /**
   * Stops pulling and resolves once no handler runs. With a deadline (`timeoutMs`, else the
   * worker's `stopGraceMs`) it rejects with WorkerStopTimeoutError instead when handlers still
   * run then: queued events are handed back at once, running ones keep running without lease
   * renewal. Every call shares one drain; a later stop() without a deadline still waits for it.
   */
  async stop(options: WorkerStopOptions = {}): Promise<void> {
    const timeoutMs = stopTimeout(options.timeoutMs ?? this.#ctx.options.stopGraceMs);
    const drained = this.#halt();
    if (timeoutMs === undefined) return drained;
    await withDeadline(drained, timeoutMs, () => {
      this.#giveUp();
      return stopTimeoutError(this.consumer, timeoutMs, this.#runs.values());
    });
  }

  /** Starts the drain once; resolves when no handler runs and the pull loops ended. */
  #halt(): Promise<void> {
    this.#stopping ??= this.#drain();
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    this.#running = false;
    for (const f of this.#fetches) f.stop();
    this.#notify();
    await Promise.allSettled(this.#loops);
    if (this.#held.size > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#lease.stop();
    // The verdicts are fire-and-forget publishes: make sure the broker has them before resolving.
    if (!this.#ctx.nc.isClosed()) await this.#ctx.nc.flush().catch(() => undefined);
  }

  /**
   * A stop's deadline passed. Never started: hand back at once (counts as a delivery). Still
   * running: their lease lapses now that it is no longer renewed, and the broker redelivers
   * them (a late ack still counts if it comes first). No timer is left to hold the process.
   */
  #giveUp(): void {
    this.#abandoned = true;
    this.#lease.stop();
    for (const h of this.#queue.splice(0)) {
      sendVerdict(() => h.msg.nak());
      this.#release(h);
    }
  }

  /** A held event is done with; wakes the drain when it was the last. */
  #release(h: Held): void {
    this.#held.delete(h);
    this.#runs.delete(h);
    if (this.#held.size === 0) for (const w of this.#idleWaiters.splice(0)) w();
  }

  #notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }

  /** Resolves on the next change of held events (or stop), or after `ms`. */
  #waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.#waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }

  /** Held events allowed beyond the running ones, sized by the measured handler time. */
  #prefetch(): number {
    if (Number.isNaN(this.#avgHandlerMs)) return 0;
    const n = Math.floor((PREFETCH_BUDGET_MS * this.#ctx.options.concurrency) / Math.max(this.#avgHandlerMs, 0.001));
    return Math.min(n, MAX_PREFETCH);
  }

  /** Free room of the fetch window, when it is worth a pull request (at least half the window). */
  #refillDue(): number {
    const window = this.#ctx.options.concurrency + this.#prefetch();
    const free = window - this.#held.size - this.#requested;
    if (free <= 0) return 0;
    // Refill in chunks of at least half the window, except when nothing is held at all.
    return free >= Math.ceil(window / 2) || this.#held.size + this.#requested === 0 ? free : 0;
  }

  async #pullEvents(): Promise<void> {
    while (this.#running) {
      const free = this.#refillDue();
      if (free === 0) {
        await this.#waitForChange(FETCH_EXPIRES_MS);
        continue;
      }
      await this.#pull(this.#ctx.events, "events", free);
    }
  }

  async #pullRedrive(): Promise<void> {
    while (this.#running) {
      // Redriven letters share the window with events; a full window waits (rare: poll).
      if (this.#held.size >= this.#ctx.options.concurrency + this.#prefetch()) {
        await this.#waitForChange(REDRIVE_POLL_MS);
        continue;
      }
      await this.#pull(this.#ctx.redrive, "redrive", Math.min(this.#ctx.options.concurrency, REDRIVE_BATCH));
    }
  }

  /** One pull request of `batch` messages; every message received is held and dispatched. */
  async #pull(consumer: Consumer, source: SourceKind, batch: number): Promise<void> {
    const counted = source === "events";
    if (counted) this.#requested += batch;
    let received = 0;
    let iter: ConsumerMessages | undefined;
    try {
      iter = await consumer.fetch({ max_messages: batch, expires: FETCH_EXPIRES_MS });
      this.#fetches.add(iter);
      if (!this.#running) iter.stop();
      for await (const msg of iter) {
        received++;
        if (counted) this.#requested--;
        this.#accept({ msg, source });
      }
    } catch {
      // The Sync was closed under a running worker: nothing can be fetched or acked any more.
      if (this.#ctx.nc.isClosed()) {
        this.#lease.stop();
        void this.#halt();
        return;
      }
      // Broker away, consumer or stream deleted: try again shortly, until stopped.
      if (this.#running) await this.#sleepWhileRunning(PULL_RETRY_MS);
    } finally {
      if (iter) this.#fetches.delete(iter);
      if (counted) this.#requested -= batch - received;
    }
  }

  async #sleepWhileRunning(ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (this.#running && Date.now() < end) await this.#waitForChange(end - Date.now());
  }

  #accept(h: Held): void {
    if (this.#abandoned) return sendVerdict(() => h.msg.nak());
    this.#held.add(h);
    this.#queue.push(h);
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight < this.#ctx.options.concurrency && this.#queue.length > 0) {
      this.#inFlight++;
      void this.#settle(this.#queue.shift() as Held);
    }
  }

  /** Handles one delivery from start to verdict, in one async frame (this is the hot path). */
  async #settle(h: Held): Promise<void> {
    try {
      const { maxAttempts, backoffMs } = this.#ctx.options.declaration;
      const attempt = h.msg.info.deliveryCount;
      let event: ProcessEvent<T>;
      try {
        // The event is ours (decoded for this delivery): the attempt is added in place.
        event = this.#decode(h) as ProcessEvent<T>;
      } catch (err) {
        // Not an event (published around Tidemark): keep it, raw, in the dead-letter stream.
        await storeDeadLetter(this.#ctx, h, this.#rawEvent(h.msg), attempt, describeError(err));
        return;
      }
      if (attempt > maxAttempts) {
        // The last attempt ended without a verdict (its worker died, or the term was lost).
        await storeDeadLetter(this.#ctx, h, event, attempt - 1, {
          name: "AttemptsExhausted",
          message: `attempt ${attempt - 1} of ${maxAttempts} did not finish: its worker stopped or crashed before acknowledging`,
        });
        return;
      }
      event.attempt = attempt;
      const started = performance.now();
      this.#runs.set(h, { eventId: event.eventId, streamSequence: h.msg.seq, attempt, since: started });
      let failure: { error: unknown } | undefined;
      const span = { topic: this.#ctx.runtime.options.id, consumer: this.consumer, eventId: event.eventId, attempt };
      try {
        await inHandlerSpan(h.msg.headers, span, () => this.#ctx.handler(event));
      } catch (error) {
        failure = { error };
      }
      const took = performance.now() - started;
      this.#ctx.runtime.meters.recordAttempt(span.topic, this.consumer, took, !failure ? "ack" : attempt < maxAttempts ? "retry" : "dead_letter");
      this.#avgHandlerMs = Number.isNaN(this.#avgHandlerMs) ? took : this.#avgHandlerMs * 0.9 + took * 0.1;
      if (!failure) {
        if (h.source === "redrive") await removeRedriven(this.#ctx, h.msg);
        sendVerdict(() => h.msg.ack());
      } else if (attempt < maxAttempts) {
        sendVerdict(() => h.msg.nak(retryDelay(backoffMs, attempt)));
      } else {
        await storeDeadLetter(this.#ctx, h, event, attempt, describeError(failure.error));
      }
    } finally {
      this.#inFlight--;
      this.#release(h);
      this.#pump();
      // Wake the pull loop only when it has something to do: a refill is due, or a drain ended.
      if (this.#waiters.size > 0 && (this.#held.size === 0 || !this.#running || this.#refillDue())) this.#notify();
    }
  }

  #decode(h: Held): TidemarkEvent<T> {
    if (h.source === "events") return this.#ctx.runtime.toEvent<T>(h.msg);
    const record = decodeDeadLetterRecord(h.msg.string());
    if (!record) throw new TypeError(`redrive message ${h.msg.seq} is not a dead-letter record`);
    return record.event as TidemarkEvent<T>;
  }

  #rawEvent(msg: JsMsg): TidemarkEvent<T> {
    return {
      eventId: eventIdFor(this.#ctx.incarnation, msg.seq),
      cursor: this.#ctx.runtime.cursorAt(msg.seq),
      streamSequence: msg.seq,
      data: msg.string() as T,
      publishedAt: msg.time.getTime(),
    };
  }
}
