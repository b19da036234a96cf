/**
 * `HubRegistry`: the hubs of one Sync. One follower per (topic, tenant) per process, created by
 * the first subscriber and retired when the last leaves. Built only on the public `Topic`
 * interface (`head`, `follow`, `replay`, `cursorSequence`, `cursorAt`), so it works over any
 * implementation of it.
 */
import {
  ErrorCode,
  InvalidCursorError,
  TidemarkError,
  type Cursor,
  type TidemarkEvent,
} from "@tidemark/shared";
import type { Hub, HubSubscribeOptions, Topic } from "../core/types.js";
import { Follower, type HubSettings } from "./follower.js";
import { HeadReader } from "./head.js";

/** Settings of every hub of a registry. */
export interface HubRegistryOptions {
  /** Recent events each hub keeps in memory for subscribers that resume a little behind. @default 512 */
  ringEvents?: number;
  /** Byte bound of that window (estimated by `sizeOf`). @default 1 MiB */
  ringBytes?: number;
  /**
   * A fresh hub starts its follower at its first subscriber's cursor when that cursor is at most
   * this many stream sequences behind the head (otherwise at the head). @default 20000
   */
  maxBackfillSequences?: number;
  /** Estimated size of an event in the window. @default JSON length of `data` + 200 */
  sizeOf?: (event: TidemarkEvent) => number;
}

const defaults: Required<HubRegistryOptions> = {
  ringEvents: 512,
  ringBytes: 1024 * 1024,
  maxBackfillSequences: 20_000,
  sizeOf: (event) => (JSON.stringify(event.data)?.length ?? 0) + 200,
};

/** Progress callbacks of one subscription (used by the bridge for `caught_up` frames and metrics). */
export interface HubProgress {
  /** The subscription reached the live edge. `cursor` is a watermark: every event up to it was yielded. */
  onCaughtUp?(cursor: Cursor): void;
  /** The subscription was behind the in-memory window and started a replay. */
  onReplay?(): void;
}

export interface SharedHubSubscribeOptions extends HubSubscribeOptions {
  progress?: HubProgress;
  /**
   * A lighter stand-in for `signal` when there are many subscribers (an AbortController costs
   * about a kilobyte). Used instead of `signal` when given.
   */
  cancel?: Cancellation;
}

/** A one-shot cancel flag with the part of AbortSignal a hub subscription needs. */
export class Cancellation {
  aborted = false;
  #follower: { poke(): void } | undefined;
  #controller: AbortController | undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#follower?.poke();
    this.#controller?.abort();
  }

  /** @internal */
  watch(follower: { poke(): void } | undefined): void {
    this.#follower = follower;
  }

  /** A real AbortSignal tied to this cancellation, made on first use (for replays). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }
}

/**
 * The hubs of one Sync. `topic.hub({ tenantId })` returns `registry.get(topic, tenantId)`.
 *
 * @example
 * const hubs = new HubRegistry();
 * for await (const event of hubs.get(topic, "acme").subscribe({ after, signal })) apply(event);
 */
export class HubRegistry {
  readonly #settings: HubSettings;
  readonly #followers = new Map<Topic<unknown>, Map<string | undefined, Follower<unknown>>>();
  readonly #heads = new WeakMap<Topic<unknown>, HeadReader>();
  #closed = false;

  constructor(options: HubRegistryOptions = {}) {
    const s = { ...defaults, ...options };
    for (const key of ["ringEvents", "ringBytes", "maxBackfillSequences"] as const) {
      if (!Number.isSafeInteger(s[key]) || s[key] < 0) {
        throw new TidemarkError(ErrorCode.InvalidArgument, `hub option ${key} must be a non-negative integer`);
      }
    }
    this.#settings = s;
  }

  /** The shared hub of (topic, tenant). Cheap: the follower starts with the first subscriber. */
  get<T>(topic: Topic<T>, tenantId?: string): SharedHub<T> {
    return new SharedHub(this, topic, tenantId);
  }

  /** Followers running now: one per (topic, tenant) with at least one subscriber. */
  get followerCount(): number {
    let n = 0;
    for (const byTenant of this.#followers.values()) n += byTenant.size;
    return n;
  }

  /** Retires every follower; their subscribers end with a `CLOSED` error. */
  close(): void {
    this.#closed = true;
    for (const byTenant of [...this.#followers.values()]) {
      for (const follower of [...byTenant.values()]) follower.retire();
    }
    this.#followers.clear();
  }

  /** @internal */
  subscriberCount(topic: Topic<unknown>, tenantId: string | undefined): number {
    return this.#followers.get(topic)?.get(tenantId)?.members ?? 0;
  }

  /** @internal */
  head(topic: Topic<unknown>): Promise<number> {
    let reader = this.#heads.get(topic);
    if (!reader) this.#heads.set(topic, (reader = new HeadReader(topic)));
    return reader.read();
  }

  /** @internal Joins (creating if needed) the follower of (topic, tenant). */
  acquire<T>(topic: Topic<T>, tenantId: string | undefined): Follower<T> {
    if (this.#closed) throw new TidemarkError(ErrorCode.Closed, "the hub registry is closed");
    const key = topic as Topic<unknown>;
    let byTenant = this.#followers.get(key);
    if (!byTenant) this.#followers.set(key, (byTenant = new Map()));
    let follower = byTenant.get(tenantId) as Follower<T> | undefined;
    if (!follower) {
      const created = new Follower<T>(topic, tenantId, this.#settings);
      created.onEnd = () => {
        if (byTenant.get(tenantId) === (created as Follower<unknown>)) byTenant.delete(tenantId);
        if (byTenant.size === 0 && this.#followers.get(key) === byTenant) this.#followers.delete(key);
      };
      byTenant.set(tenantId, created as Follower<unknown>);
      follower = created;
    }
    follower.members++;
    return follower;
  }

  /** @internal */
  release(follower: Follower<unknown>): void {
    follower.members--;
    if (follower.members <= 0) follower.retire();
  }
}

/** The process's shared follower of one (topic, tenant); see {@link HubRegistry}. */
export class SharedHub<T = unknown> implements Hub<T> {
  readonly #registry: HubRegistry;
  readonly #topic: Topic<T>;
  readonly tenantId: string | undefined;

  /** @internal */
  constructor(registry: HubRegistry, topic: Topic<T>, tenantId: string | undefined) {
    this.#registry = registry;
    this.#topic = topic;
    this.tenantId = tenantId;
  }

  get topicId(): string {
    return this.#topic.id;
  }

  get subscriberCount(): number {
    return this.#registry.subscriberCount(this.#topic as Topic<unknown>, this.tenantId);
  }

  /**
   * Events of the tenant after `after` (replayed, then live, no hole and no duplicate at the
   * seam), or — without `after` — live-only from the head read now. Errors (an invalid or
   * foreign cursor, `RetentionGapError`) surface from iteration, never synchronously.
   */
  subscribe(options: SharedHubSubscribeOptions = {}): AsyncIterable<TidemarkEvent<T>> {
    // Read the head now, not when iteration starts: a live-only subscriber starts at subscribe().
    const head = this.#registry.head(this.#topic as Topic<unknown>);
    head.catch(() => undefined);
    const registry = this.#registry;
    const topic = this.#topic;
    const tenantId = this.tenantId;
    return { [Symbol.asyncIterator]: () => run(registry, topic, tenantId, options, head) };
  }
}

async function* run<T>(
  registry: HubRegistry,
  topic: Topic<T>,
  tenantId: string | undefined,
  options: SharedHubSubscribeOptions,
  headRead: Promise<number>,
): AsyncGenerator<TidemarkEvent<T>> {
  const { progress, after, cancel } = options;
  const signal: { readonly aborted: boolean } | undefined = cancel ?? options.signal;
  if (signal?.aborted) return;
  const follower = registry.acquire(topic, tenantId);
  // An abort wakes every waiter of the follower (they look again and wait again): cheaper than
  // racing each wait against a per-subscriber promise, and aborts are rare.
  const poke = cancel ? undefined : () => follower.poke();
  if (poke) options.signal?.addEventListener("abort", poke, { once: true });
  cancel?.watch(follower);
  try {
    const head = await headRead;
    if (signal?.aborted) return;
    let pos = head;
    if (after !== undefined) {
      pos = topic.cursorSequence(after);
      if (pos > head) throw new InvalidCursorError(`the cursor is past the head of topic ${topic.id}`);
    }
    follower.start(pos, head);
    let caughtUp = false;
    if (after === undefined) {
      caughtUp = true;
      progress?.onCaughtUp?.(topic.cursorAt(pos));
    }
    while (true) {
      const ring = follower.ring!;
      if (pos >= ring.floor) {
        // Attached: read the shared window at our own pace; the same event objects for all.
        let index = ring.indexAfter(pos);
        while (pos >= ring.floor) {
          if (signal?.aborted) return;
          if (index < ring.start) index = ring.start;
          const event = ring.at(index);
          if (event) {
            index++;
            if (event.streamSequence > pos) {
              pos = event.streamSequence;
              yield event;
            }
            continue;
          }
          if (follower.error !== undefined) throw follower.error;
          if (follower.retired) throw new TidemarkError(ErrorCode.Closed, "the hub was closed");
          if (!caughtUp && follower.live) {
            caughtUp = true;
            progress?.onCaughtUp?.(topic.cursorAt(Math.max(pos, follower.watermark)));
          }
          await follower.changed();
        }
      }
      // Behind the window: catch up by replay up to a head read now, then look again.
      if (follower.error !== undefined) throw follower.error;
      if (follower.retired) throw new TidemarkError(ErrorCode.Closed, "the hub was closed");
      caughtUp = false;
      progress?.onReplay?.();
      const until = await registry.head(topic as Topic<unknown>);
      if (signal?.aborted) return;
      if (until > pos) {
        const replaySignal = cancel ? cancel.signal : options.signal;
        for await (const event of topic.replay({ after: topic.cursorAt(pos), until: topic.cursorAt(until), tenantId, signal: replaySignal })) {
          if (event.streamSequence > pos) {
            pos = event.streamSequence;
            yield event;
          }
        }
        if (signal?.aborted) return;
        pos = Math.max(pos, until);
      }
    }
  } finally {
    if (poke) options.signal?.removeEventListener("abort", poke);
    cancel?.watch(undefined);
    registry.release(follower as Follower<unknown>);
  }
}
