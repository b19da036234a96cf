/**
 * live(): best-effort broadcast of new events. The event stream republishes every stored event
 * on a core subject with its sequence in a header, so a live reader is one core subscription,
 * filtered by tenant on the server, and no JetStream consumer. A reader that falls more than
 * `maxPending` events behind loses the oldest ones: live is for events whose loss is harmless.
 */
import type { Msg } from "@nats-io/nats-core";
import type { TidemarkEvent } from "@tidemark/shared";
import type { TopicRuntime } from "./runtime.js";

export interface LiveReadOptions {
  tenantId?: string;
  signal?: AbortSignal;
  /** Events buffered for a slow reader before the oldest are dropped. @default 1024 */
  maxPending?: number;
}

/** @internal The live subject for one tenant or the whole topic. */
export type LiveSubjectFn = (tenantId: string | undefined) => string;

export async function* readLive<T>(
  rt: TopicRuntime,
  liveSubject: LiveSubjectFn,
  decode: (seq: number, data: Uint8Array) => TidemarkEvent<T>,
  opts: LiveReadOptions,
): AsyncGenerator<TidemarkEvent<T>> {
  const { signal } = opts;
  if (signal?.aborted) return;
  const subject = liveSubject(opts.tenantId);
  const h = await rt.ready();
  const max = opts.maxPending ?? 1024;
  let queue: Msg[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const sub = h.nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) {
        closed = true;
      } else {
        queue.push(msg);
        if (queue.length > max) queue.splice(0, queue.length - max);
      }
      wake?.();
    },
  });
  const stop = () => {
    closed = true;
    wake?.();
  };
  signal?.addEventListener("abort", stop, { once: true });
  void sub.closed.then(stop);
  try {
    await h.nc.flush();
    for (;;) {
      while (queue.length === 0 && !closed) await new Promise<void>((r) => (wake = r));
      if (closed && (signal?.aborted || queue.length === 0)) return;
      const batch = queue;
      queue = [];
      for (const m of batch) {
        const seq = Number(m.headers?.get("Nats-Sequence"));
        if (!Number.isSafeInteger(seq) || seq <= 0) continue;
        yield decode(seq, m.data);
        if (signal?.aborted) return;
      }
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    sub.unsubscribe();
  }
}
