/**
 * @internal A hub subscription's read state on the wire (protocol 1.4): once the subscription asked
 * for it (`subscribe.read`), the principal's state is sent after `subscribed` and again on every
 * change, whoever made it (another connection of the principal, on any bridge process, or a
 * service through `topic.readState()`). The watch is made before the first read, so no change is
 * missed between them; only newer versions are sent (the answer to a `mark_read` is the newest told).
 * The KV entry is the one store: the bridge keeps nothing but the last version it told.
 */
import type { ReadState, ReadStateHandle, ReadStateWatch } from "../core/types.js";

export class ReadFollow {
  readonly handle: ReadStateHandle;
  /** The principal key the state belongs to (a refresh may switch the connection's principal). */
  readonly principalKey: string;
  readonly #send: (read: ReadState, ref: string | undefined) => void;
  #watch: ReadStateWatch | undefined;
  #closed = false;
  /** The newest state told on this connection (undefined: none yet). */
  #last: ReadState | undefined;

  constructor(handle: ReadStateHandle, principalKey: string, send: (read: ReadState, ref: string | undefined) => void) {
    this.handle = handle;
    this.principalKey = principalKey;
    this.#send = send;
  }

  /** Watches the key, then reads it and tells the state. */
  async start(): Promise<void> {
    const watch = await this.handle.watch((state) => this.tell(state));
    if (this.#closed) return watch.close();
    this.#watch = watch;
    this.tell(await this.handle.get());
  }

  /**
   * Sends `state` when it is newer than the last told; as the answer to `ref`, always, but never
   * an older version than one told already (a change by another connection may have been told
   * while this write was under way): versions on one connection only grow.
   */
  tell(state: ReadState, ref?: string): void {
    if (this.#closed) return;
    const last = this.#last;
    if (last && state.version <= last.version) {
      if (ref !== undefined) this.#send(last, ref);
      return;
    }
    this.#last = state;
    this.#send(state, ref);
  }

  close(): void {
    this.#closed = true;
    this.#watch?.close();
  }
}
