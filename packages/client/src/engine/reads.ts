/**
 * The engine's feeds' read state on the wire (protocol 1.4): each feed's `read_state` from the
 * server, the reads its tabs make, and one `mark_read` in flight per feed on the current socket.
 * The state itself is each feed's `ReadLog` (read-log.ts), saved with its history for the
 * principal; `Feeds` hands the frames here and says when the socket's subscriptions change.
 */
import { ErrorCode, type ErrorFrame, type ReadStateFrame } from "@tidemark/shared";
import type { ReadWrite } from "../read-log.js";
import type { ReadMark } from "../types.js";
import type { Delivery } from "./delivery.js";
import type { History } from "./history.js";
import type { Feed } from "./model.js";
import type { Socket } from "./socket.js";
import type { WireTable } from "./wire-table.js";

/** The protocol revision (1.4) that brought first pages and read state: sent only to a server at it or later. */
const INBOX_REVISION = 4;

/** @internal */
export class Reads {
  readonly #parts: { socket: Socket; delivery: Delivery; history: History };
  readonly #wire: WireTable;
  /** The engine's planned retries (cleared on its stop): a rate-limited read waits there. */
  readonly #retries: Set<ReturnType<typeof setTimeout>>;
  /** One `mark_read` in flight per feed on this socket: its `ref` and what it wrote. */
  readonly #reading = new Map<Feed, { ref: string; write: ReadWrite }>();
  #nextRef = 0;
  /** The protocol revision of the current socket's server (`welcome.revision`; 0: before 1.4). */
  revision = 0;

  constructor(parts: { socket: Socket; delivery: Delivery; history: History }, wire: WireTable, retries: Set<ReturnType<typeof setTimeout>>) {
    this.#parts = parts;
    this.#wire = wire;
    this.#retries = retries;
  }

  /** The server takes first pages and read state. */
  get inbox(): boolean {
    return this.revision >= INBOX_REVISION;
  }

  /** The feed's subscription (or, without a feed, every one) is gone: its answer will not come. */
  forget(feed?: Feed): void {
    if (feed) this.#reading.delete(feed);
    else this.#reading.clear();
  }

  /** `read_state`: the principal's read state of a feed (after `subscribed`, on a change, or an answer). */
  readState(frame: ReadStateFrame): void {
    const feed = this.#wire.feed(frame.id);
    if (!feed?.log) return;
    if (frame.ref !== undefined && this.#reading.get(feed)?.ref === frame.ref) this.#reading.delete(feed);
    if (feed.log.read.fromServer(frame.read)) this.#parts.delivery.read(feed);
    this.#parts.history.mark(feed.log);
    this.push(feed);
  }

  /** A tab marks read: shown in every tab of the feed at once, saved, and sent when the server can take it. */
  async markRead(feed: Feed, mark: ReadMark): Promise<void> {
    const log = feed.log;
    if (!log || feed.request.mode !== "hub") return;
    const changed = "cursor" in mark ? log.read.markRead(mark.cursor) : log.read.markItem(mark.eventId, mark.item);
    if (!changed) return;
    this.#parts.delivery.read(feed);
    this.#parts.history.mark(log);
    this.push(feed);
    // Saved before the call returns: a tab closed right after still has its read on the next start.
    await this.#parts.history.flush();
  }

  /** Sends the feed's next unconfirmed read, one at a time, once the server accepted the feed. */
  push(feed: Feed): void {
    if (this.#reading.has(feed) || !feed.log || !this.inbox) return;
    const id = this.#wire.acceptedId(feed);
    const write = id === undefined ? undefined : feed.log.read.next();
    if (id === undefined || !write) return;
    const ref = `r${++this.#nextRef}`;
    if (!this.#parts.socket.send({ type: "mark_read", id, ref, ...write })) return;
    this.#reading.set(feed, { ref, write });
  }

  /** An `error` answering a `mark_read`: tried again when it may succeed later, else dropped. */
  refused(frame: ErrorFrame): void {
    const feed = frame.id === undefined ? undefined : this.#wire.feed(frame.id);
    const inFlight = feed ? this.#reading.get(feed) : undefined;
    if (!feed?.log || !inFlight || inFlight.ref !== frame.ref) return;
    this.#reading.delete(feed);
    if (frame.code === ErrorCode.LimitExceeded && frame.retryAfterMs !== undefined) {
      const timer = setTimeout(() => {
        this.#retries.delete(timer);
        this.push(feed);
      }, frame.retryAfterMs);
      this.#retries.add(timer);
      return;
    }
    // Broker trouble and an expired token: kept, sent again on the next subscribe.
    if (frame.code === ErrorCode.BrokerUnavailable || frame.code === ErrorCode.Internal || frame.code === ErrorCode.Unauthorized) return;
    // Not a cursor of the topic (re-created), another tenant's event, too many items: dropped.
    feed.log.read.drop(inFlight.write);
    this.#parts.delivery.read(feed);
    this.#parts.history.mark(feed.log);
    this.push(feed);
  }
}
