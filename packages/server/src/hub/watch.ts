/**
 * The registry's look at its topics' retained windows: one timer per registry and, per tick,
 * one stream-info request per topic with running hubs, shared by all of that topic's hubs.
 * Each hub decides from it whether its watermark needs a refresh (one lookup per hub) and
 * whether its stream was re-created; nothing here costs a request per subscriber.
 */
import type { Topic } from "../core/types.js";
import type { Follower } from "./follower.js";
import { readWindow } from "./window.js";

/** Watermark refreshes in flight at once per registry (each is one broker lookup). */
const MAX_REFRESHES = 8;

/** @internal */
export class WindowWatch {
  readonly #pollMs: number;
  readonly #followers: () => Map<Topic<unknown>, Map<string | undefined, Follower<unknown>>>;
  readonly #busy = new Set<Topic<unknown>>();
  /** First retained sequence of each topic at the previous look: retention moves it forward. */
  readonly #fronts = new WeakMap<Topic<unknown>, number>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #queue: (() => Promise<void>)[] = [];
  #running = 0;

  constructor(pollMs: number, followers: () => Map<Topic<unknown>, Map<string | undefined, Follower<unknown>>>) {
    this.#pollMs = pollMs;
    this.#followers = followers;
  }

  /** Starts ticking (if not already); it stops by itself once no hub runs. */
  ensure(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), this.#pollMs);
    // Hubs must not keep a process alive on their own.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#queue = [];
  }

  #tick(): void {
    const all = this.#followers();
    if (all.size === 0) return this.stop();
    for (const [topic, byTenant] of all) {
      if (this.#busy.has(topic)) continue;
      this.#busy.add(topic);
      readWindow(topic)
        .then((window) => {
          if (!window) return;
          const now = Date.now();
          const before = this.#fronts.get(topic);
          if (window.first !== undefined) this.#fronts.set(topic, window.first);
          const frontMoved = before !== undefined && window.first !== undefined && window.first > before;
          // The live Map, not a copy (a topic's hubs have a follower per tenant: one per user
          // in a notification centre); a follower that fails here leaves it, which a Map's
          // iterator survives.
          for (const follower of byTenant.values()) {
            if (follower.observe(window, now, frontMoved)) this.#enqueue(() => follower.refreshWatermark(window));
          }
        })
        // Broker trouble: the next tick looks again; followers report lasting trouble themselves.
        .catch(() => undefined)
        .finally(() => this.#busy.delete(topic));
    }
  }

  #enqueue(refresh: () => Promise<void>): void {
    this.#queue.push(refresh);
    this.#drain();
  }

  #drain(): void {
    while (this.#running < MAX_REFRESHES && this.#queue.length > 0) {
      const next = this.#queue.shift()!;
      this.#running++;
      void next().finally(() => {
        this.#running--;
        this.#drain();
      });
    }
  }
}
