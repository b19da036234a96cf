/**
 * Patient, shared `head()` reads. Every caller gets a head read that STARTED after its call: an
 * earlier read still in flight may have been answered before an event the caller already saw
 * published, and a subscriber checked against it could start below that event (a hole in the
 * cursor contract). Callers that arrive before the next read starts share it, and reads of one
 * topic start at most one at a time and at least `spacingMs` apart: a resume storm of thousands
 * of subscribers costs a few dozen broker lookups, not one each (docs/bridge.md).
 */
import { backoffCeiling, ErrorCode, isTidemarkError, type Cursor } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { sleep } from "../core/sleep.js";
import { IncarnationCursors } from "./incarnation.js";
import { BROKER_RETRY } from "./retry.js";

/** @internal One head read. */
export interface HeadRead {
  cursor: Cursor;
  sequence: number;
  /**
   * Cursors of the incarnation the head cursor names (`cursors.incarnation`, undefined for cursors
   * of another format), one instance per head reader while the incarnation lasts.
   */
  cursors: IncarnationCursors;
  /** Reads of one topic are numbered in the order they started: a higher serial saw a newer stream. */
  serial: number;
}

/** @internal What a head reader needs of its topic (a fake in head.test.ts). */
export type HeadSource = Pick<Topic, "head" | "cursorSequence" | "cursorAt">;

/** @internal */
export interface HeadReaderOptions {
  /** Least time between the starts of two reads (the `headReadSpacingMs` hub option). @default 25 */
  spacingMs?: number;
}

/** @internal A read that has not started yet and the callers waiting for it. */
interface Pending {
  promise: Promise<HeadRead>;
  resolve: (read: HeadRead) => void;
  reject: (err: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** A caller that may not wait out the spacing is among them. */
  urgent: boolean;
}

/** @internal */
export class HeadReader {
  readonly #topic: HeadSource;
  readonly #spacingMs: number;
  #inflight = false;
  #pending: Pending | undefined;
  #lastStart = -Infinity;
  #serial = 0;
  #cursors: IncarnationCursors | undefined;
  /** Reads started so far (each one broker lookup, bar retries). */
  reads = 0;

  constructor(topic: HeadSource, options: HeadReaderOptions = {}) {
    this.#topic = topic;
    this.#spacingMs = options.spacingMs ?? 25;
  }

  /**
   * The topic's head, read after this call. `urgent` (a live-only subscriber, which nothing
   * replays for) starts the next read without waiting out the spacing: now when none is in
   * flight, else as soon as the one in flight ends.
   */
  read(urgent = false): Promise<HeadRead> {
    let pending = this.#pending;
    if (!pending) {
      let resolve!: (read: HeadRead) => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<HeadRead>((res, rej) => ((resolve = res), (reject = rej)));
      pending = this.#pending = { promise, resolve, reject, timer: undefined, urgent: false };
    }
    pending.urgent ||= urgent;
    if (!this.#inflight) this.#schedule();
    return pending.promise;
  }

  /** Starts the pending read now, or arms a timer for the end of the spacing. */
  #schedule(): void {
    const pending = this.#pending;
    if (!pending) return;
    const wait = pending.urgent ? 0 : this.#lastStart + this.#spacingMs - performance.now();
    if (wait <= 0) {
      if (pending.timer) clearTimeout(pending.timer);
      this.#start(pending);
    } else {
      // A sub-millisecond clock: Date.now() truncates, so a start late in a millisecond let the
      // next one come up to a millisecond early. Looked at again when it fires: a timer counts
      // from the event loop's cached time, so after a long tick it fires early by that much (7 ms
      // seen under load).
      pending.timer ??= setTimeout(() => {
        pending.timer = undefined;
        this.#schedule();
      }, wait);
    }
  }

  #start(pending: Pending): void {
    this.#pending = undefined;
    this.#inflight = true;
    this.#lastStart = performance.now();
    this.reads++;
    const serial = ++this.#serial;
    this.#readOnce(serial).then(pending.resolve, pending.reject).finally(() => {
      this.#inflight = false;
      this.#schedule();
    });
  }

  // One shared read answers many subscribers: a timeout is retried a few times (0.2, 0.4, 0.8 s:
  // one lookup, no herd to spread) rather than failing all of them at once; what lasts longer
  // each subscription retries under the retry rule (retry.ts).
  async #readOnce(serial: number): Promise<HeadRead> {
    for (let attempt = 0; ; attempt++) {
      try {
        const cursor = await this.#topic.head();
        let cursors = this.#cursors;
        if (!cursors?.sameAs(cursor)) this.#cursors = cursors = new IncarnationCursors(cursor, this.#topic);
        return { cursor, sequence: this.#topic.cursorSequence(cursor), serial, cursors };
      } catch (err) {
        if (attempt >= 3 || !isTidemarkError(err) || err.code !== ErrorCode.BrokerUnavailable) throw err;
        await sleep(backoffCeiling(attempt, BROKER_RETRY.backoff));
      }
    }
  }
}
