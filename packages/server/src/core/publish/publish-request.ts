/**
 * @internal Tidemark's own JetStream publish request. `js.publish` goes through `nc.request`,
 * which makes per request a `RequestError("cancelled")` with a stack (even when answered), a
 * timer and a deferred: 15–20% of a publisher's CPU (docs/benchmarks/profiles/core.md). Here a
 * connection has ONE inbox subscription (`<inbox>.*`, like nats.js's muxed requests), each
 * attempt a token in a pending map, and ONE timer for every attempt's timeout. The answer is
 * the PubAck's JSON; failures are the errors nats.js would give, so `isTransient`,
 * `isNoResponders` and `mapNatsError` read them unchanged:
 *   no server took it (status 503)      NoRespondersError   (transient, nothing stored)
 *   no answer within the timeout        TimeoutError        (transient, maybe stored)
 *   a JetStream API error in the answer JetStreamApiError   (by its `err_code`)
 *   the connection dropped              ConnectionDropped   (sent again at once, maybe stored)
 *   the connection closed               ClosedConnectionError (permanent)
 *   the connection stayed down          ConnectionDown      (never sent: nothing stored)
 * An answer after its attempt timed out finds no token and is dropped. An attempt made while
 * the connection is down is not handed to nats.js, which would buffer it and discard the
 * buffer at its next dial (the attempt then waited its whole timeout, for an answer that could
 * not come): it waits for the reconnect, at most `connectWaitMs`, then is sent or fails.
 */
import { ClosedConnectionError, createInbox, NoRespondersError, TimeoutError, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError, type ApiError, type PubAck } from "@nats-io/jetstream";
import { ConnectionDropped, type ConnectionDrops } from "../connection/connection-drops.js";

/** How long an attempt waits for a connection that is down, by default (ms). */
export const CONNECT_WAIT_MS = 2_000;

interface Pending {
  resolve(ack: PubAck): void;
  reject(err: unknown): void;
  /** `Date.now()` after which the attempt times out. */
  expires: number;
  subject: string;
}

const decoder = new TextDecoder();

/** The publish requests of one connection. */
export class PublishRequests {
  readonly #nc: NatsConnection;
  /** `<inbox>.`; a reply subject is this plus a token. */
  readonly #inbox: string;
  readonly #pending = new Map<string, Pending>();
  #next = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (Infinity: no timer). */
  #timerAt = Infinity;
  #closed: Error | undefined;
  readonly #drops: Pick<ConnectionDrops, "watch" | "down" | "back" | "notConnected">;
  readonly #connectWaitMs: number;

  constructor(
    nc: NatsConnection,
    drops: Pick<ConnectionDrops, "watch" | "down" | "back" | "notConnected">,
    options: { connectWaitMs?: number } = {},
  ) {
    this.#nc = nc;
    this.#drops = drops;
    this.#connectWaitMs = options.connectWaitMs ?? CONNECT_WAIT_MS;
    // The application's `inboxPrefix` (for permissions) holds for these replies too.
    this.#inbox = `${createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)}.`;
    nc.subscribe(`${this.#inbox}*`, {
      callback: (err, msg) => {
        if (err === null) this.#answer(msg);
      },
    });
    // Every attempt in flight gets no answer once the connection drops: fail them all at once
    // (one watcher per connection, watching again after each drop).
    const onDrop = (reason: ConnectionDropped) => {
      drops.watch(onDrop);
      this.#failAll(reason);
    };
    drops.watch(onDrop);
    void nc.closed().then(() => {
      this.#closed = new ClosedConnectionError();
      this.#failAll(this.#closed);
    });
  }

  /** Attempts waiting for an answer (for tests). */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Publishes `bytes` to `subject` and resolves with the stream's acknowledgement. While the
   * connection is down it first waits for it (at most `connectWaitMs`, and inside `timeoutMs`).
   */
  send(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<PubAck> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#drops.down) return this.#sendWhenBack(subject, bytes, headers, timeoutMs);
    return this.#send(subject, bytes, headers, timeoutMs);
  }

  async #sendWhenBack(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<PubAck> {
    const started = Date.now();
    const waitMs = Math.min(this.#connectWaitMs, timeoutMs);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([this.#drops.back, late, this.#nc.closed()]).finally(() => clearTimeout(timer));
    if (this.#closed) throw this.#closed;
    if (this.#drops.down) throw this.#drops.notConnected();
    return this.#send(subject, bytes, headers, Math.max(1, timeoutMs - (Date.now() - started)));
  }

  #send(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<PubAck> {
    const token = (this.#next++).toString(36);
    const expires = Date.now() + timeoutMs;
    return new Promise<PubAck>((resolve, reject) => {
      try {
        this.#nc.publish(subject, bytes, { reply: this.#inbox + token, headers });
      } catch (err) {
        reject(err); // closed, draining, over max_payload: nothing was sent
        return;
      }
      this.#pending.set(token, { resolve, reject, expires, subject });
      if (expires < this.#timerAt) this.#schedule(expires);
    });
  }

  #answer(msg: Msg): void {
    const token = msg.subject.substring(this.#inbox.length);
    const pending = this.#pending.get(token);
    if (pending === undefined) return; // timed out or dropped: that attempt was answered already
    this.#pending.delete(token);
    try {
      pending.resolve(pubAckOf(msg, pending.subject));
    } catch (err) {
      pending.reject(err);
    }
  }

  #schedule(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#sweep(), Math.max(0, at - Date.now()));
    this.#timer.unref?.();
  }

  /** Times out every attempt past its time, then waits for the earliest one left. */
  #sweep(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [token, pending] of this.#pending) {
      if (pending.expires <= now) {
        this.#pending.delete(token);
        pending.reject(new TimeoutError());
      } else if (pending.expires < next) {
        next = pending.expires;
      }
    }
    if (next !== Infinity) this.#schedule(next);
  }

  #failAll(err: Error): void {
    if (this.#pending.size === 0) return;
    const failed = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of failed) pending.reject(err);
  }
}

/** The acknowledgement in an answer, or the error it stands for (as nats.js's `js.publish`). */
export function pubAckOf(msg: Msg, subject: string): PubAck {
  if (msg.data.length === 0 && msg.headers?.code === 503) throw new NoRespondersError(subject);
  const answer = JSON.parse(decoder.decode(msg.data)) as PubAck & { error?: ApiError };
  if (answer.error) throw new JetStreamApiError(answer.error);
  if (!answer.stream) throw new JetStreamError("invalid ack response");
  answer.duplicate = answer.duplicate === true;
  return answer;
}
