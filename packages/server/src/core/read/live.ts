/**
 * live(): best-effort broadcast of new events. The event stream republishes every stored event
 * on a core subject with its sequence in a header, so a live reader is one core subscription,
 * filtered by tenant on the server, and no JetStream consumer.
 *
 * The subscription is made when `live()` is called, not at the first read: synchronously when the
 * topic is already provisioned in this process (then the SUB goes out on the connection before
 * any later publish of this process), else as soon as provisioning finishes. Until the reader
 * reads, events wait in a buffer of `maxPending` events; past it the OLDEST are dropped, so a
 * reader that falls behind sees the newest ones. Live is for events whose loss is harmless.
 */
import type { Msg, MsgHdrs, NatsConnection, Subscription } from "@nats-io/nats-core";
import type { TidemarkEvent } from "@tidemark/shared";
import type { TopicHandles } from "../runtime.js";

export interface LiveReadOptions {
  signal?: AbortSignal;
  /** Events buffered for a slow (or not yet reading) reader before the oldest are dropped. @default 1024 */
  maxPending?: number;
}

/** What a live feed needs from its topic. */
export interface LiveSource<T> {
  /** The subject to subscribe to, or the error the first read must raise (a bad tenant id). */
  subject: string | Error;
  /** Handles when the topic is already provisioned (subscribe at once), else undefined. */
  handlesNow(): TopicHandles | undefined;
  ready(): Promise<TopicHandles>;
  decode(seq: number, data: Uint8Array, headers?: MsgHdrs): TidemarkEvent<T>;
}

/** Starts a live feed now; iteration reads what arrived since. */
export class LiveFeed<T> implements AsyncIterator<TidemarkEvent<T>> {
  readonly #source: LiveSource<T>;
  readonly #signal: AbortSignal | undefined;
  readonly #max: number;
  #queue: Msg[] = [];
  #head = 0;
  #sub: Subscription | undefined;
  #error: unknown;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(source: LiveSource<T>, opts: LiveReadOptions) {
    this.#source = source;
    this.#signal = opts.signal;
    this.#max = opts.maxPending ?? 1024;
    if (typeof source.subject !== "string") {
      this.#error = source.subject;
      return;
    }
    if (this.#signal?.aborted) {
      this.#closed = true;
      return;
    }
    this.#signal?.addEventListener("abort", this.#stop, { once: true });
    const h = source.handlesNow();
    if (h) this.#subscribe(h.nc, source.subject);
    else {
      const subject = source.subject;
      source.ready().then(
        (handles) => this.#subscribe(handles.nc, subject),
        (err: unknown) => this.#fail(err),
      );
    }
  }

  #subscribe(nc: NatsConnection, subject: string): void {
    if (this.#closed) return;
    try {
      this.#sub = nc.subscribe(subject, {
        callback: (err, msg) => {
          if (err) this.#fail(err);
          else this.#push(msg);
        },
      });
    } catch (err) {
      this.#fail(err);
      return;
    }
    void this.#sub.closed.then(this.#stop, this.#stop);
  }

  #push(msg: Msg): void {
    this.#queue.push(msg);
    if (this.#queue.length - this.#head > this.#max) this.#head++; // drop the oldest
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#wake?.();
  }

  #fail(err: unknown): void {
    if (this.#closed) return;
    this.#error ??= err;
    this.#wake?.();
  }

  readonly #stop = (): void => {
    this.#closed = true;
    this.#wake?.();
  };

  #cleanup(): void {
    this.#closed = true;
    this.#signal?.removeEventListener("abort", this.#stop);
    this.#sub?.unsubscribe();
    this.#queue = [];
    this.#head = 0;
  }

  async next(): Promise<IteratorResult<TidemarkEvent<T>>> {
    for (;;) {
      if (this.#signal?.aborted) return this.return();
      while (this.#head < this.#queue.length) {
        const m = this.#queue[this.#head++]!;
        const seq = Number(m.headers?.get("Nats-Sequence"));
        if (Number.isSafeInteger(seq) && seq > 0) return { done: false, value: this.#source.decode(seq, m.data, m.headers) };
      }
      if (this.#error !== undefined) {
        const err = this.#error;
        this.#error = undefined;
        this.#cleanup();
        throw err;
      }
      if (this.#closed) return this.return();
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async return(): Promise<IteratorResult<TidemarkEvent<T>>> {
    this.#cleanup();
    return { done: true, value: undefined };
  }
}

/**
 * The iterable of `live()`: the feed started at the call is handed to the first iteration; a
 * second iteration of the same iterable starts its own feed then.
 */
export function openLive<T>(source: LiveSource<T>, opts: LiveReadOptions): AsyncIterable<TidemarkEvent<T>> {
  let first: LiveFeed<T> | undefined = new LiveFeed<T>(source, opts);
  return {
    [Symbol.asyncIterator]: () => {
      const feed = first ?? new LiveFeed<T>(source, opts);
      first = undefined;
      return feed;
    },
  };
}
