/**
 * Read state: `topic.readState({ principal, tenantId })` keeps what one principal has read of one
 * (topic, tenant) in a JetStream KV bucket, one bucket per namespace (`TMRS_<namespace>`), one key
 * per (topic, principal, tenant). The principal is stored as its opaque id (the SHA-256 the bridge
 * sends in `welcome.principal`), so a key reveals no user name and no principal can name another's
 * key by a crafted string.
 *
 * The state is a cursor (everything up to it is read) and a bounded set of events read one by one
 * above it, folded in when the cursor passes them. Every write is a compare-and-set on the key's
 * revision: the cursor never moves back, whichever process writes. Changes reach watchers through
 * one KV watch per bucket and connection (an ordered consumer of updates only, shared by every
 * watcher of the process and dispatched by key), started before the state is read, so no change
 * between the read and the watch is missed. Not a core subscription on the key's subject: that
 * also delivers the writes the stream refused (a compare-and-set that lost), and a write before
 * the stream stored it, so a watcher that read the entry on such a tick could miss the change.
 */
import {
  assertTenantId,
  CursorMismatchError,
  decodeCursor,
  InvalidArgumentError,
  LimitExceededError,
  MAX_READ_ITEMS,
  type Cursor,
} from "@tidemark/shared";
import { KvWatchInclude, type KV } from "@nats-io/kv";
import { readStateBucket, readStateKey } from "../resources/broker-names.js";
import { isNoMessageFound, isWrongLastSequence } from "../errors.js";
import { assertNotPastHead } from "./past-head.js";
import { openBucket } from "./checkpoint.js";
import { principalId } from "../principal-id.js";
import type { TopicRuntime } from "../runtime.js";
import type { ReadState, ReadStateHandle, ReadStateWatch, Topic } from "../types.js";

type ReadTopic = Topic<unknown> & TopicRuntime;

/** What the KV entry holds: `i` pairs an event id with its sequence, so the cursor can fold it. */
interface Stored {
  v: 1;
  n: number;
  c?: string;
  i: [string, number][];
}

const EMPTY: ReadState = Object.freeze({ cursor: undefined, items: [], version: 0 }) as ReadState;

function parse(bytes: Uint8Array): Stored | undefined {
  try {
    const s = JSON.parse(new TextDecoder().decode(bytes)) as Stored;
    return s && s.v === 1 && typeof s.n === "number" && Array.isArray(s.i) ? s : undefined;
  } catch {
    return undefined;
  }
}

/** @internal The public view of a stored value: a cursor of another incarnation counts as none. */
export function viewOf(stored: Stored | undefined, incarnation: string): ReadState {
  if (!stored) return EMPTY;
  const cursor = stored.c !== undefined && sameIncarnation(stored.c, incarnation) ? (stored.c as Cursor) : undefined;
  return { cursor, items: cursor === undefined && stored.c !== undefined ? [] : stored.i.map(([id]) => id), version: stored.n };
}

function sameIncarnation(cursor: string, incarnation: string): boolean {
  const inc = decodeCursor(cursor).incarnation;
  return inc === "" || inc === incarnation;
}

/** The listeners of one bucket's changes in this process, by key. */
class KeyWatcher {
  readonly #listeners = new Map<string, Set<(stored: Stored) => void>>();

  add(key: string, listener: (stored: Stored) => void): () => void {
    let set = this.#listeners.get(key);
    if (!set) this.#listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
    };
  }

  dispatch(key: string, stored: Stored): void {
    for (const listener of this.#listeners.get(key) ?? []) listener(stored);
  }
}

const watchers = new WeakMap<KV, Promise<KeyWatcher>>();

/** The bucket's one watch in this process, started on first use (resolves once it is in place). */
function keyWatcher(kv: KV): Promise<KeyWatcher> {
  let watcher = watchers.get(kv);
  if (!watcher) {
    watcher = kv.watch({ include: KvWatchInclude.UpdatesOnly, ignoreDeletes: true }).then(
      (updates) => {
        const keys = new KeyWatcher();
        void (async () => {
          try {
            for await (const e of updates) {
              if (e.operation !== "PUT") continue;
              const stored = parse(e.value);
              if (stored) keys.dispatch(e.key, stored);
            }
          } catch {
            // The connection closed: the next watch() starts another.
          } finally {
            if (watchers.get(kv) === watcher) watchers.delete(kv);
          }
        })();
        return keys;
      },
      (err: unknown) => {
        watchers.delete(kv);
        throw err;
      },
    );
    watchers.set(kv, watcher);
  }
  return watcher;
}

class KvReadState implements ReadStateHandle {
  readonly tenantId: string | undefined;
  readonly #topic: ReadTopic;
  readonly #principal: string;
  #key: Promise<string> | undefined;

  constructor(topic: ReadTopic, principal: string, tenantId: string | undefined) {
    this.#topic = topic;
    this.#principal = principal;
    this.tenantId = tenantId;
  }

  #keyOf(): Promise<string> {
    return (this.#key ??= principalId(this.#principal).then((id) => readStateKey(this.#topic.id, id, this.tenantId)));
  }

  async #kv(): Promise<{ kv: KV; incarnation: string; key: string }> {
    const h = await this.#topic.ready();
    try {
      const kv = await openBucket(h.js, readStateBucket(this.#topic.namespace), this.#topic.options.replicas);
      return { kv, incarnation: h.incarnation, key: await this.#keyOf() };
    } catch (err) {
      throw this.#topic.mapError(err);
    }
  }

  async #read(kv: KV, key: string): Promise<{ stored: Stored | undefined; revision: number }> {
    try {
      const e = await kv.get(key);
      if (!e || e.operation !== "PUT") return { stored: undefined, revision: e?.revision ?? 0 };
      return { stored: parse(e.value), revision: e.revision };
    } catch (err) {
      throw this.#topic.mapError(err);
    }
  }

  async get(): Promise<ReadState> {
    const { kv, incarnation, key } = await this.#kv();
    return viewOf((await this.#read(kv, key)).stored, incarnation);
  }

  /** A cursor of this topic's current incarnation, not past the head: its sequence. */
  async #checked(cursor: string): Promise<number> {
    const seq = this.#topic.cursorSequence(cursor); // InvalidCursorError / CursorMismatchError
    const head = await this.#topic.head();
    if (!sameIncarnation(cursor, decodeCursor(head).incarnation)) {
      throw new CursorMismatchError(`cursor belongs to an earlier incarnation of topic ${JSON.stringify(this.#topic.id)}`);
    }
    assertNotPastHead(this.#topic.id, seq, this.#topic.cursorSequence(head));
    return seq;
  }

  async markRead(upTo: string): Promise<ReadState> {
    const seq = await this.#checked(upTo);
    return this.#update((s) => {
      if (s.c !== undefined && decodeCursor(s.c).sequence >= seq) return undefined; // never back
      return { c: this.#topic.cursorAt(seq), i: s.i.filter(([, q]) => q > seq) };
    });
  }

  async markItemRead(cursor: string): Promise<ReadState> {
    const seq = await this.#checked(cursor);
    const eventId = await this.#eventIdAt(seq);
    return this.#update((s) => {
      if (s.c !== undefined && decodeCursor(s.c).sequence >= seq) return undefined;
      if (s.i.some(([id]) => id === eventId)) return undefined;
      if (s.i.length >= MAX_READ_ITEMS) {
        throw new LimitExceededError(`${MAX_READ_ITEMS} events are marked read one by one above the read cursor: mark them read up to a cursor first`);
      }
      return { c: s.c, i: [...s.i, [eventId, seq]] };
    });
  }

  /** The event id at `seq`, which must be an event of this tenant. */
  async #eventIdAt(seq: number): Promise<string> {
    const h = await this.#topic.ready();
    const notOurs = () => new InvalidArgumentError(`sequence ${seq} of topic ${JSON.stringify(this.#topic.id)} is not an event of this tenant`);
    try {
      const msg = await h.jsm.streams.getMessage(this.#topic.streamName, { seq });
      if (!msg || msg.subject !== this.#topic.subjectFor(this.tenantId)) throw notOurs();
      return this.#topic.toEvent(msg).eventId;
    } catch (err) {
      if (isNoMessageFound(err)) throw notOurs();
      if (err instanceof InvalidArgumentError) throw err;
      throw this.#topic.mapError(err);
    }
  }

  /**
   * Compare-and-set until `change` (given the stored state of the current incarnation) says
   * nothing is to change (undefined) or its result is written; returns the stored state.
   */
  async #update(change: (s: Stored) => Omit<Stored, "v" | "n"> | undefined): Promise<ReadState> {
    const { kv, incarnation, key } = await this.#kv();
    for (;;) {
      const { stored, revision } = await this.#read(kv, key);
      const current: Stored =
        stored && (stored.c === undefined || sameIncarnation(stored.c, incarnation)) ? stored : { v: 1, n: stored?.n ?? 0, i: [] };
      const next = change(current);
      if (!next) return viewOf(current, incarnation);
      const value: Stored = { v: 1, n: current.n + 1, ...(next.c !== undefined ? { c: next.c } : {}), i: next.i };
      try {
        const bytes = new TextEncoder().encode(JSON.stringify(value));
        if (revision === 0) await kv.create(key, bytes);
        else await kv.update(key, bytes, revision);
        return viewOf(value, incarnation);
      } catch (err) {
        if (!isWrongLastSequence(err)) throw this.#topic.mapError(err);
        // Another writer was first: read again and compare.
      }
    }
  }

  async watch(listener: (state: ReadState) => void): Promise<ReadStateWatch> {
    const { kv, incarnation, key } = await this.#kv();
    let keys: KeyWatcher;
    try {
      keys = await keyWatcher(kv);
    } catch (err) {
      throw this.#topic.mapError(err);
    }
    // The watch delivers stored entries in order; only a newer version is passed on.
    let told = -1;
    const remove = keys.add(key, (stored) => {
      if (stored.n <= told) return;
      told = stored.n;
      listener(viewOf(stored, incarnation));
    });
    return { close: remove };
  }
}

/** A principal's read state of `topic`; throws InvalidArgumentError for a bad principal or tenant id. */
export function openReadState(topic: ReadTopic, options: { principal: string; tenantId?: string }): ReadStateHandle {
  if (typeof options?.principal !== "string" || options.principal.length === 0) {
    throw new InvalidArgumentError("readState: principal must be a non-empty string (the bridge's principal key)");
  }
  if (options.tenantId !== undefined) assertTenantId(options.tenantId);
  return new KvReadState(topic, options.principal, options.tenantId);
}
