/**
 * `HubRegistry`: the hubs of one Sync. One follower per (topic, tenant) per process, created by
 * the first subscriber and retired when the last leaves. In hub mode "topic" (the default) the
 * followers of a topic share one whole-topic feed (`feed.ts`): one broker consumer per topic
 * per process; in mode "tenant" each follower has its own tenant-filtered consumer. Built on the public `Topic` interface
 * (`head`, `latestCursor`, `follow`, `replay`, `cursorSequence`, `cursorAt`), so it works over any
 * implementation of it; for topics of a Sync its window look also reads the first retained
 * sequence (see `window.ts`).
 */
import { ClosedError, InvalidArgumentError, type TidemarkEvent } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { Follower, type HubSettings } from "./follower.js";
import { FeedFollow } from "./follow-feed.js";
import { TenantFollow } from "./follow-tenant.js";
import { FEED_BACKLOG_SEQUENCES, type FeedLink } from "./settings.js";
import { HeadReader, type HeadRead } from "./head.js";
import { run } from "./subscriber.js";
import { WindowWatch } from "./watch.js";
import { TopicFeed } from "./feed.js";
import { Limiter } from "./limit.js";
import { HubStats } from "./stats.js";
import { recreated, sameIncarnation } from "./incarnation.js";
import type { HubMode, HubRegistryOptions } from "../core/hub-options.js";
import { globalMeters, type MeterRegistry } from "../observe/meters.js";
import { eventSizer, sizeOnce } from "./size-estimate.js";
import type { BatchHub, HubProgress, LiveSink, SharedHubSubscribeOptions } from "./contract.js";

// Declared apart (contract.ts, cancellation.ts) so that the bridge and the subscribers need not import this file.
export { Cancellation } from "./cancellation.js";
export type { HubProgress, LiveSink, SharedHubSubscribeOptions };

export type { HubMode, HubRegistryOptions };

const defaults: Required<Omit<HubRegistryOptions, "sizeOf">> = {
  ringEvents: 512,
  ringBytes: 1024 * 1024,
  maxBackfillSequences: 20_000,
  watermarkIntervalMs: 60_000,
  windowPollMs: 2_000,
  hubMode: "topic",
  maxCatchUps: 64,
  feedBacklogBytes: 8 * 1024 * 1024,
  headReadSpacingMs: 25,
};

/**
 * The hubs of one Sync. `topic.hub({ tenantId })` returns `registry.get(topic, tenantId)`.
 *
 * @example
 * const hubs = new HubRegistry();
 * for await (const event of hubs.get(topic, "acme").subscribe({ after, signal })) apply(event);
 *
 * It is the subscribers' `SubscriberHost` (contract.ts) by its shape, with no `implements`
 * clause: the published declaration must not name that unpublished type.
 */
export class HubRegistry {
  readonly #settings: HubSettings;
  readonly #followers = new Map<Topic<unknown>, Map<string | undefined, Follower<unknown>>>();
  readonly #heads = new WeakMap<Topic<unknown>, HeadReader>();
  readonly #watch: WindowWatch;
  readonly #feeds = new Map<Topic<unknown>, TopicFeed<unknown>>();
  /** How every follower of mode "topic" reaches its topic's feed (one object, not one per follower). */
  readonly #link: FeedLink;
  readonly #mode: (topicId: string) => HubMode;
  /** @internal Bound on catch-up replays at once (mode "topic"). */
  readonly limiter: Limiter;
  /** @internal Debug counts of catch-ups (mode "topic"). */
  readonly stats = new HubStats();
  readonly #unobserve: () => void;
  readonly #headReadSpacingMs: number;
  #closed = false;

  /**
   * @param meters where `tidemark_hub_followers` is reported (a Sync passes its own).
   *   @default the process default, on the global MeterProvider
   */
  constructor(options: HubRegistryOptions = {}, meters: MeterRegistry = globalMeters) {
    const s = { ...defaults, ...options };
    for (const key of ["ringEvents", "ringBytes", "maxBackfillSequences", "watermarkIntervalMs", "windowPollMs", "maxCatchUps", "feedBacklogBytes", "headReadSpacingMs"] as const) {
      if (!Number.isSafeInteger(s[key]) || s[key] < 0) {
        throw new InvalidArgumentError(`hub option ${key} must be a non-negative integer`);
      }
    }
    if (s.windowPollMs === 0) throw new InvalidArgumentError("hub option windowPollMs must be positive");
    if (s.maxCatchUps === 0) throw new InvalidArgumentError("hub option maxCatchUps must be positive");
    const { hubMode } = s;
    if (typeof hubMode !== "function" && hubMode !== "topic" && hubMode !== "tenant") {
      throw new InvalidArgumentError(`hub option hubMode must be "topic" or "tenant"`);
    }
    this.#mode = typeof hubMode === "function" ? hubMode : () => hubMode;
    this.limiter = new Limiter(s.maxCatchUps);
    this.#link = { feedFor: (topic, head) => this.#feedFor(topic, head), limiter: this.limiter, stats: this.stats };
    this.#headReadSpacingMs = s.headReadSpacingMs;
    if (options.sizeOf !== undefined && typeof options.sizeOf !== "function") throw new InvalidArgumentError("hub option sizeOf must be a function");
    // Once per event: the feed's backlog and the tenant's ring hold the same event object. The
    // default knows the object shapes this registry's events repeat (size-estimate.ts).
    const sizeOf = sizeOnce(options.sizeOf ?? eventSizer());
    this.#settings = { ...s, sizeOf, backlogSequences: Math.max(s.maxBackfillSequences, FEED_BACKLOG_SEQUENCES), backlogBytes: s.feedBacklogBytes };
    this.#watch = new WindowWatch(s.windowPollMs, () => this.#followers);
    this.#unobserve = meters.observeHubs(() => this.followerCount);
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

  /** Whole-topic feeds running now (mode "topic"): one per topic with at least one subscriber. */
  get feedCount(): number {
    return this.#feeds.size;
  }

  /** @internal True when the topic's hubs share a feed. */
  shared(topic: Topic<unknown>): boolean {
    return this.#mode(topic.id) === "topic";
  }

  /** Retires every follower; their subscribers end with a `CLOSED` error. */
  close(): void {
    this.#closed = true;
    this.#unobserve();
    this.#watch.stop();
    for (const byTenant of [...this.#followers.values()]) {
      for (const follower of [...byTenant.values()]) follower.retire();
    }
    this.#followers.clear();
    for (const feed of [...this.#feeds.values()]) feed.stop();
    this.#feeds.clear();
  }

  /** @internal */
  subscriberCount(topic: Topic<unknown>, tenantId: string | undefined): number {
    return this.#followers.get(topic)?.get(tenantId)?.members ?? 0;
  }

  /** @internal A head read started after this call (see head.ts); `urgent` skips the spacing. */
  head(topic: Topic<unknown>, urgent = false): Promise<HeadRead> {
    return this.#headReader(topic).read(urgent);
  }

  /** @internal Head reads started for `topic` so far. */
  headReads(topic: Topic<unknown>): number {
    return this.#heads.get(topic)?.reads ?? 0;
  }

  #headReader(topic: Topic<unknown>): HeadReader {
    let reader = this.#heads.get(topic);
    if (!reader) this.#heads.set(topic, (reader = new HeadReader(topic, { spacingMs: this.#headReadSpacingMs })));
    return reader;
  }

  /** @internal Joins (creating if needed) the follower of (topic, tenant). */
  acquire<T>(topic: Topic<T>, tenantId: string | undefined): Follower<T> {
    if (this.#closed) throw new ClosedError("the hub registry is closed");
    const key = topic as Topic<unknown>;
    let byTenant = this.#followers.get(key);
    if (!byTenant) this.#followers.set(key, (byTenant = new Map()));
    let follower = byTenant.get(tenantId) as Follower<T> | undefined;
    if (!follower) {
      const settings = this.#settings;
      const source = this.shared(key) ? new FeedFollow<T>(this.#link, settings.backlogSequences) : new TenantFollow<T>(settings.maxBackfillSequences);
      const created = new Follower<T>(topic, tenantId, settings, source);
      created.onEnd = this.#ended;
      byTenant.set(tenantId, created as Follower<unknown>);
      follower = created;
      this.#watch.ensure();
    }
    follower.members++;
    return follower;
  }

  /** Forgets a follower that ended (its `onEnd`: one function for all of them, not a closure each). */
  readonly #ended = (follower: Follower<unknown>): void => {
    const byTenant = this.#followers.get(follower.topic as Topic<unknown>);
    if (!byTenant) return;
    if (byTenant.get(follower.tenantId) === follower) byTenant.delete(follower.tenantId);
    if (byTenant.size === 0) this.#followers.delete(follower.topic as Topic<unknown>);
  };


  /**
   * The topic's running feed of the head's incarnation, started at that head if none runs. A feed
   * of an older stream (a newer head read saw the topic re-created) ends with a mismatch for its
   * followers; undefined when the head read is the older one.
   */
  #feedFor<T>(topic: Topic<T>, head: HeadRead): TopicFeed<T> | undefined {
    const key = topic as Topic<unknown>;
    const running = this.#feeds.get(key) as TopicFeed<T> | undefined;
    if (running && !running.stopped) {
      if (sameIncarnation(running.cursors.incarnation, head.cursors.incarnation)) return running;
      if (head.serial <= running.startSerial) return undefined;
      running.fail(recreated(topic.id));
    }
    const feed = new TopicFeed<T>(topic, head, this.#settings, this.stats);
    feed.onEnd = () => {
      if (this.#feeds.get(key) === (feed as TopicFeed<unknown>)) this.#feeds.delete(key);
    };
    this.#feeds.set(key, feed as TopicFeed<unknown>);
    return feed;
  }

  /**
   * Warms the topic's feed (hub mode "topic"; nothing in mode "tenant"): starts it at the head
   * now and reads the last `sequences` events of the topic (default `maxBackfillSequences`) into
   * its backlog with one whole-topic read, so that tenants resuming after a restart are served
   * from memory instead of waiting, all of them, for that read while a reconnect storm starves
   * the process (issue 27: ~3-13 s a read then). The feed is held for `holdMs` (default 60 s)
   * even with no follower, then runs only while followers use it. Resolves when the read is
   * done; broker trouble rejects (the feed's followers then extend it as before).
   */
  async warm(topic: Topic<unknown>, o: { holdMs?: number; sequences?: number } = {}): Promise<void> {
    if (this.#closed || !this.shared(topic)) return;
    const head = await this.head(topic, true);
    const feed = this.#feedFor(topic, head);
    if (!feed || feed.stopped) return;
    const release = feed.hold();
    setTimeout(release, o.holdMs ?? 60_000).unref?.();
    const why = await feed.cover(Math.max(0, head.sequence - (o.sequences ?? this.#settings.maxBackfillSequences)));
    if (why !== undefined) this.stats.coverFailed(`warm: ${why}`);
  }

  /** @internal */
  release(follower: Follower<unknown>): void {
    follower.members--;
    if (follower.members <= 0) follower.retire();
  }
}

/** The process's shared follower of one (topic, tenant); see {@link HubRegistry}. */
export class SharedHub<T = unknown> {
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
   * foreign cursor, a cursor of a destroyed and re-created topic (`CursorMismatchError`),
   * `RetentionGapError`) surface from iteration, never synchronously. The subscriber's position
   * follows the hub's watermark while it is idle, so retention passing an idle tenant's last
   * event is never a gap.
   */
  subscribe(options: SharedHubSubscribeOptions = {}): AsyncIterable<TidemarkEvent<T>> {
    const batches = this.subscribeBatches(options);
    const signal = options.cancel ?? options.signal;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const batch of batches) {
          for (const event of batch) {
            if (signal?.aborted) return;
            yield event;
          }
        }
      },
    };
  }

  /**
   * @internal `subscribe()` in arrays: each holds the events the subscriber could take at once
   * (from the hub's window, up to `MAX_BATCH` of subscriber.ts), so a reader that sends them on (the bridge)
   * pays one iteration step per array, not per event. The arrays and their events are shared:
   * never change them. An arrow function, so it can be handed around unbound.
   */
  readonly subscribeBatches = (options: SharedHubSubscribeOptions = {}): AsyncIterable<readonly TidemarkEvent<T>[]> => {
    const registry = this.#registry;
    const topic = this.#topic;
    const tenantId = this.tenantId;
    // Read the head now, not when iteration starts: a live-only subscriber starts at subscribe()
    // (DESIGN: never at a running follower's watermark, which may lag an event whose publish
    // already returned). It needs no spacing: its read starts at once when none is in flight.
    const head = registry.head(topic as Topic<unknown>, options.after === undefined);
    head.catch(() => undefined);
    return { [Symbol.asyncIterator]: () => run(registry, topic, tenantId, options, head) };
  };
}

// SharedHub keeps the hub contract the bridge reads (contract.ts). Checked here rather than with
// an `implements` clause, which would make the published declaration require the unpublished
// `subscribeBatches`.
const _keepsContract: SharedHub extends BatchHub ? true : never = true;
void _keepsContract;
