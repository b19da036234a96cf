/**
 * watch(): a coalescing change signal for live pages that re-read canonical state. It is one
 * core subscription on the topic's live subjects (the stream republishes every stored event),
 * so a tick means "something changed and is readable". Capacity one: while a tick waits unread,
 * more events add nothing, so the publisher is never blocked or slowed and memory is constant.
 *
 * `watch()` resolves only once the subscription has reached the server (subscribe, then flush):
 * an event stored after it resolves is never missed, whichever connection published it.
 */
import type { Subscription } from "@nats-io/nats-core";
import { assertTenantId } from "@tidemark/shared";
import type { TopicHandles } from "../runtime.js";
import type { Watch, WatchOptions } from "../types.js";

class Ticks implements Watch, AsyncIterator<void> {
  #pending = false;
  #closed = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  #sub: Subscription | undefined;
  readonly #signal: AbortSignal | undefined;

  constructor(signal: AbortSignal | undefined) {
    this.#signal = signal;
    if (signal?.aborted) this.#closed = true;
    else signal?.addEventListener("abort", this.close, { once: true });
  }

  attach(sub: Subscription): void {
    this.#sub = sub;
    // The connection closing ends the watch; a subscription error is raised by the next read.
    void sub.closed.then(this.close, this.fail);
  }

  readonly fail = (err: unknown): void => {
    this.#error ??= err;
    this.close();
  };

  tick = (): void => {
    this.#pending = true;
    this.#wake?.();
  };

  readonly close = (): void => {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener("abort", this.close);
    this.#sub?.unsubscribe();
    this.#wake?.();
  };

  [Symbol.asyncIterator](): AsyncIterator<void> {
    return this;
  }

  async next(): Promise<IteratorResult<void>> {
    for (;;) {
      if (this.#error !== undefined) {
        const err = this.#error;
        this.#error = undefined;
        throw err;
      }
      if (this.#closed) return { done: true, value: undefined };
      if (this.#pending) {
        this.#pending = false;
        return { done: false, value: undefined };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async return(): Promise<IteratorResult<void>> {
    this.close();
    return { done: true, value: undefined };
  }
}

/**
 * Subscribes to the live subject of `options.tenantId` (every tenant when absent) and flushes;
 * resolves once the server has the subscription.
 */
export async function openWatch(
  ready: () => Promise<TopicHandles>,
  liveSubject: (tenantId: string | undefined) => string,
  options: WatchOptions,
): Promise<Watch> {
  if (options.tenantId !== undefined) assertTenantId(options.tenantId);
  const { nc } = await ready();
  const ticks = new Ticks(options.signal);
  if (options.signal?.aborted) return ticks;
  ticks.attach(nc.subscribe(liveSubject(options.tenantId), { callback: (err) => (err ? ticks.fail(err) : ticks.tick()) }));
  await nc.flush();
  return ticks;
}
