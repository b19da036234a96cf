/**
 * Coalesced `head()` reads. Every caller gets a head read that STARTED after its call (so a
 * live-only subscriber never starts before an event published before it subscribed), but
 * callers that arrive while a read is in flight share the next one: a storm of subscribes costs
 * two broker lookups at a time per topic, not one each.
 */
import { ErrorCode, isTidemarkError, type Cursor } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { incarnationOf } from "./incarnation.js";

/** @internal One head read. */
export interface HeadRead {
  cursor: Cursor;
  sequence: number;
  /** The incarnation the head cursor names (undefined for cursors of another format). */
  incarnation: string | undefined;
  /** Reads of one topic are numbered in the order they started: a higher serial saw a newer stream. */
  serial: number;
}

/** @internal */
export class HeadReader {
  readonly #topic: Pick<Topic, "head" | "cursorSequence">;
  #inflight: Promise<HeadRead> | undefined;
  #pending: Promise<HeadRead> | undefined;
  #serial = 0;

  constructor(topic: Pick<Topic, "head" | "cursorSequence">) {
    this.#topic = topic;
  }

  /** The topic's head, read after this call. */
  read(): Promise<HeadRead> {
    if (this.#pending) return this.#pending;
    if (!this.#inflight) return this.#start();
    const pending = this.#inflight.then(
      () => this.#start(),
      () => this.#start(),
    );
    this.#pending = pending;
    return pending;
  }

  #start(): Promise<HeadRead> {
    this.#pending = undefined;
    const serial = ++this.#serial;
    // One shared read answers many subscribers: a timeout is retried a few times rather than
    // failing all of them at once (which would send them all back at the broker together).
    const read = (async (): Promise<HeadRead> => {
      for (let attempt = 0; ; attempt++) {
        try {
          const cursor = await this.#topic.head();
          return { cursor, sequence: this.#topic.cursorSequence(cursor), incarnation: incarnationOf(cursor), serial };
        } catch (err) {
          if (attempt >= 3 || !isTidemarkError(err) || err.code !== ErrorCode.BrokerUnavailable) throw err;
          await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
        }
      }
    })();
    this.#inflight = read;
    const clear = () => {
      if (this.#inflight === read) this.#inflight = undefined;
    };
    read.then(clear, clear);
    return read;
  }
}
