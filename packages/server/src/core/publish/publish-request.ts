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
 *   a JetStream API error in the answer JetStreamApiError   (by its `err_code`; 10077 "store is
 *                                                         closed" is retried, maybe stored)
 *   the connection dropped              ConnectionDropped   (sent again at once, maybe stored)
 *   the stream elected a leader         LeaderElected       (sent again at once, maybe stored)
 *   the connection closed               ClosedConnectionError (permanent)
 *   the connection stayed down          ConnectionDown      (never sent: nothing stored)
 * An answer after its attempt timed out finds no token and is dropped. An attempt made while
 * the connection is down is not handed to nats.js, which would buffer it and discard the
 * buffer at its next dial (the attempt then waited its whole timeout, for an answer that could
 * not come): it waits for the reconnect, at most `connectWaitMs`, then is sent or fails.
 *
 * A stream leader that steps down (or dies) drops the proposals it had not committed, and the
 * attempts behind them get no answer: they waited their whole timeout (5 s by default; issue 29).
 * JetStream announces each election on `$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>`, so
 * the connection listens there (one subscription) and fails every attempt in flight to that
 * stream at once; the call sends it again with the same message id, which the new leader
 * dedupes against the old attempt if that one was committed after all.
 */
import { ClosedConnectionError, createInbox, NoRespondersError, TimeoutError, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError, type ApiError, type PubAck } from "@nats-io/jetstream";
import { ConnectionDropped, type ConnectionDrops } from "../connection/connection-drops.js";

/** Where JetStream announces a stream's new leader; the stream name is the last token. */
const LEADER_ELECTED = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.";

/**
 * What an attempt in flight is told when its stream elected a leader: the old leader may have
 * dropped it, or committed it without answering. Send again with the same id.
 */
export class LeaderElected extends Error {
  constructor(readonly stream: string) {
    super(`stream ${stream} elected a new leader`);
  }
}

/** How long an attempt waits for a connection that is down, by default (ms). */
export const CONNECT_WAIT_MS = 2_000;

interface Pending {
  resolve(ack: PubAck): void;
  reject(err: unknown): void;
  /** `Date.now()` after which the attempt times out. */
  expires: number;
  subject: string;
  /** The stream the attempt is for, when the caller said (elections fail it; see LeaderElected). */
  stream: string | undefined;
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
    // A stream's new leader: its attempts in flight may have been dropped by the old one. The
    // subscription is best effort: where permissions refuse it, an attempt waits its timeout.
    nc.subscribe(`${LEADER_ELECTED}*`, {
      callback: (err, msg) => {
        if (err === null) this.#elected(msg.subject.substring(LEADER_ELECTED.length));
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
   * With `stream`, an election of that stream's leader while the attempt waits fails it with
   * {@link LeaderElected}.
   */
  send(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number, stream?: string): Promise<PubAck> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#drops.down) return this.#sendWhenBack(subject, bytes, headers, timeoutMs, stream);
    return this.#send(subject, bytes, headers, timeoutMs, stream);
  }

  async #sendWhenBack(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number, stream: string | undefined): Promise<PubAck> {
    const started = Date.now();
    const waitMs = Math.min(this.#connectWaitMs, timeoutMs);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([this.#drops.back, late, this.#nc.closed()]).finally(() => clearTimeout(timer));
    if (this.#closed) throw this.#closed;
    if (this.#drops.down) throw this.#drops.notConnected();
    return this.#send(subject, bytes, headers, Math.max(1, timeoutMs - (Date.now() - started)), stream);
  }

  #send(subject: string, bytes: Uint8Array, headers: MsgHdrs, timeoutMs: number, stream: string | undefined): Promise<PubAck> {
    const token = (this.#next++).toString(36);
    const expires = Date.now() + timeoutMs;
    return new Promise<PubAck>((resolve, reject) => {
      try {
        this.#nc.publish(subject, bytes, { reply: this.#inbox + token, headers });
      } catch (err) {
        reject(err); // closed, draining, over max_payload: nothing was sent
        return;
      }
      this.#pending.set(token, { resolve, reject, expires, subject, stream });
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

  /** `stream` has a new leader: fail its attempts in flight (all sent before the advisory came). */
  #elected(stream: string): void {
    let reason: LeaderElected | undefined;
    for (const [token, pending] of this.#pending) {
      if (pending.stream !== stream) continue;
      this.#pending.delete(token);
      pending.reject((reason ??= new LeaderElected(stream)));
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
