/**
 * Server-side positions: `topic.checkpoint(name, { tenantId })` keeps one cursor in a JetStream
 * KV bucket, one bucket per namespace (`TMCP_<namespace>`), one key per (topic, name, tenant).
 *
 * A saved cursor never moves backwards: every write is a compare-and-set on the key's revision,
 * so two processes saving the same checkpoint leave the later cursor, whatever the order. A
 * tenant-scoped checkpoint applies the watermark rule: when the tenant has no event after the
 * cursor, it saves the topic's head instead, so retention driven by other tenants does not
 * overtake an idle tenant's position. `reconcile()` applies the same rule to the saved cursor.
 *
 * A cursor past the head was never issued by the topic: `save()` refuses it, `load()` of one
 * stored by an earlier release fails, `reconcile()` moves it to the head and `save()` replaces it.
 */
import {
  assertTenantId,
  CursorMismatchError,
  decodeCursor,
  InvalidArgumentError,
  InvalidCursorError,
  type Cursor,
} from "@tidemark/shared";
import type { JetStreamClient } from "@nats-io/jetstream";
import { checkpointBucket, checkpointKey } from "../resources/broker-names.js";
import { isWrongLastSequence } from "../errors.js";
import { assertNotPastHead } from "./past-head.js";
import { Kvm, type KV } from "@nats-io/kv";
import type { TopicRuntime } from "../runtime.js";
import type { Checkpoint, Topic } from "../types.js";

/** Checkpoint names: like consumer names. */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;


const buckets = new WeakMap<JetStreamClient, Map<string, Promise<KV>>>();

/** @internal One bucket handle per connection; created on first use with the first topic's replicas. */
export function openBucket(js: JetStreamClient, bucket: string, replicas: number): Promise<KV> {
  let byName = buckets.get(js);
  if (!byName) buckets.set(js, (byName = new Map()));
  let kv = byName.get(bucket);
  if (!kv) {
    // No direct gets: a read served by a lagging replica could show an older cursor.
    kv = new Kvm(js).create(bucket, { history: 1, replicas, allow_direct: false }).catch((err: unknown) => {
      byName.delete(bucket);
      throw err;
    });
    byName.set(bucket, kv);
  }
  return kv;
}


type CheckpointTopic = Topic<unknown> & TopicRuntime;

class KvCheckpoint implements Checkpoint {
  readonly name: string;
  readonly tenantId: string | undefined;
  readonly #topic: CheckpointTopic;
  readonly #key: string;

  constructor(topic: CheckpointTopic, name: string, tenantId: string | undefined) {
    this.#topic = topic;
    this.name = name;
    this.tenantId = tenantId;
    this.#key = checkpointKey(topic.id, name, tenantId);
  }

  async #kv(): Promise<KV> {
    const h = await this.#topic.ready();
    try {
      return await openBucket(h.js, checkpointBucket(this.#topic.namespace), this.#topic.options.replicas);
    } catch (err) {
      throw this.#topic.mapError(err);
    }
  }

  /** The current incarnation, from a head read (which re-provisions after a re-creation). */
  async #head(): Promise<{ head: Cursor; incarnation: string }> {
    const head = await this.#topic.head();
    return { head, incarnation: decodeCursor(head).incarnation };
  }

  /** The saved cursor and its KV revision (0: none). */
  async #read(kv: KV): Promise<{ cursor: Cursor | undefined; revision: number }> {
    try {
      const e = await kv.get(this.#key);
      if (!e || e.operation !== "PUT") return { cursor: undefined, revision: e?.revision ?? 0 };
      return { cursor: e.string() as Cursor, revision: e.revision };
    } catch (err) {
      throw this.#topic.mapError(err);
    }
  }

  #mismatch(saved: Cursor): CursorMismatchError {
    return new CursorMismatchError(
      `checkpoint ${JSON.stringify(this.name)} of topic ${JSON.stringify(this.#topic.id)} holds a cursor of an earlier incarnation of the topic (it was destroyed and re-created): read your state again and save a new cursor (${saved})`,
    );
  }

  /**
   * A saved cursor past the head: no release checks this now, but an earlier one saved any
   * cursor, and since saves never move back one minted cursor pinned the checkpoint.
   */
  #poisoned(saved: Cursor, headSeq: number): InvalidCursorError {
    return new InvalidCursorError(
      `checkpoint ${JSON.stringify(this.name)} of topic ${JSON.stringify(this.#topic.id)} holds a cursor past the head (sequence ${decodeCursor(saved).sequence}, head ${headSeq}), which the topic never issued: reconcile() moves it to the head, or save() the cursor you applied`,
    );
  }

  async load(): Promise<Cursor | undefined> {
    const kv = await this.#kv();
    // The KV read first: a cursor saved before the head read below is never past that head.
    const { cursor } = await this.#read(kv);
    if (cursor === undefined) return undefined;
    const { head, incarnation } = await this.#head();
    if (!sameIncarnation(cursor, incarnation)) throw this.#mismatch(cursor);
    const headSeq = this.#topic.cursorSequence(head);
    if (decodeCursor(cursor).sequence > headSeq) throw this.#poisoned(cursor, headSeq);
    return cursor;
  }

  async save(cursor: string): Promise<Cursor> {
    const seq = this.#topic.cursorSequence(cursor); // InvalidCursorError / CursorMismatchError
    const kv = await this.#kv();
    const { head, incarnation } = await this.#head();
    if (!sameIncarnation(cursor, incarnation)) {
      throw new CursorMismatchError(`cursor belongs to an earlier incarnation of topic ${JSON.stringify(this.#topic.id)}`);
    }
    const headSeq = this.#topic.cursorSequence(head);
    // Read after the cursor was issued, so a cursor the topic issued is never past it.
    assertNotPastHead(this.#topic.id, seq, headSeq);
    return this.#advance(kv, await this.#watermark(seq, head), headSeq);
  }

  async reconcile(): Promise<Cursor | undefined> {
    const kv = await this.#kv();
    const { cursor } = await this.#read(kv); // before the head read, as in load()
    if (cursor === undefined) return undefined;
    const { head, incarnation } = await this.#head();
    if (!sameIncarnation(cursor, incarnation)) throw this.#mismatch(cursor);
    const headSeq = this.#topic.cursorSequence(head);
    const seq = this.#topic.cursorSequence(cursor);
    // A poisoned checkpoint moves to the head: #advance replaces a saved cursor past it.
    if (seq > headSeq) return this.#advance(kv, headSeq, headSeq);
    return this.#advance(kv, await this.#watermark(seq, head), headSeq);
  }

  /**
   * The sequence to save for "applied up to `seq`": the head (read before) when the checkpoint's
   * events after `seq` are none, else `seq`. The stream's first sequence is read last: when
   * retention already removed events after `seq`, they may have been this tenant's, so the
   * cursor stays and a replay from it reports the gap.
   */
  async #watermark(seq: number, head: Cursor): Promise<number> {
    const headSeq = this.#topic.cursorSequence(head);
    if (headSeq <= seq) return seq;
    const latest = await this.#topic.latestCursor({ tenantId: this.tenantId });
    if (latest !== undefined && this.#topic.cursorSequence(latest) > seq) return seq;
    const info = await this.#topic.streamInfo();
    if (!info || info.state.first_seq > seq + 1) return seq;
    return headSeq;
  }

  /**
   * Compare-and-set until the saved cursor is at least `seq`; returns the saved cursor. A saved
   * cursor past the head (`headSeq`, read before) is not a position: it is replaced.
   */
  async #advance(kv: KV, seq: number, headSeq: number): Promise<Cursor> {
    const cursor = this.#topic.cursorAt(seq);
    const { incarnation } = decodeCursor(cursor);
    for (;;) {
      const saved = await this.#read(kv);
      if (saved.cursor !== undefined && sameIncarnation(saved.cursor, incarnation)) {
        const savedSeq = decodeCursor(saved.cursor).sequence;
        // Another process may have saved a newer cursor since the head was read: a head read
        // after this KV read decides (one more request, only when the saved cursor is past it).
        if (savedSeq > headSeq) headSeq = this.#topic.cursorSequence(await this.#topic.head());
        if (savedSeq >= seq && savedSeq <= headSeq) return saved.cursor;
      }
      try {
        if (saved.revision === 0) await kv.create(this.#key, cursor);
        else await kv.update(this.#key, cursor, saved.revision);
        return cursor;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw this.#topic.mapError(err);
        // Another process wrote meanwhile: read again and compare.
      }
    }
  }
}

/** True when `cursor` names `incarnation` (a cursor made before first use names any). */
function sameIncarnation(cursor: string, incarnation: string): boolean {
  const inc = decodeCursor(cursor).incarnation;
  return inc === "" || inc === incarnation;
}

/** A checkpoint of `topic`; throws InvalidArgumentError for a bad name or tenant id. */
export function openCheckpoint(topic: CheckpointTopic, name: string, options: { tenantId?: string } = {}): Checkpoint {
  if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(`invalid checkpoint name ${JSON.stringify(name)}: use [A-Za-z0-9_-], at most 128 characters`);
  }
  if (options.tenantId !== undefined) assertTenantId(options.tenantId);
  return new KvCheckpoint(topic, name, options.tenantId);
}
