/**
 * @internal Notices an ordered consumer whose server stopped answering. A read's consumer has
 * one replica, on one node of the stream's peers; when that node freezes (a GC stall, a VM
 * migration, SIGSTOP) the consumer sends nothing, and nats.js only recreates it after two
 * missed idle heartbeats, which it fixes at 30 s each: a minute. So while a read gets nothing,
 * it asks its consumer for its info every `CONSUMER_PROBE_MS`; when that gets no answer within
 * `CONSUMER_PROBE_TIMEOUT_MS` (or the consumer is gone), the ordered consumer is recreated after its last delivered
 * event, by nats.js's own reset (new name, new delivery subject, on whichever node the cluster
 * places it): no hole, no duplicate. Cost: one consumer-info request per idle read per interval.
 */
import type { ConsumerMessages, PushConsumer } from "@nats-io/jetstream";

/** A read that got nothing for this long probes its consumer, ms. */
export const CONSUMER_PROBE_MS = 3_000;
/** Bound on the probe's answer (a consumer-info request answers in milliseconds), ms. */
export const CONSUMER_PROBE_TIMEOUT_MS = 2_000;

/** What nats.js's ordered push consumer messages have beyond their public type (3.x). */
interface Resettable {
  reset?: () => void;
}

export interface ConsumerWatch {
  /** Something arrived: the consumer is alive. */
  activity(): void;
  stop(): void;
}

export function watchConsumer(
  consumer: PushConsumer,
  messages: ConsumerMessages,
  options: {
    probeMs?: number;
    timeoutMs?: number;
    /** The connection's state: no probe while it is down; one soon after it comes back. */
    connection?: () => { connected: boolean; lost: Promise<void> };
    /**
     * The consumer answered its probe but has sent nothing for a probe interval (a finite read
     * gives its pass up: the replica may be missing what it waits for; reader.ts settles it).
     */
    onIdle?: () => void;
  } = {},
): ConsumerWatch {
  const probeMs = options.probeMs ?? CONSUMER_PROBE_MS;
  let last = Date.now();
  let probing = false;
  let stopped = false;
  const reset = (messages as unknown as Resettable).reset?.bind(messages);
  const probe = async () => {
    probing = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("consumer info timed out")), options.timeoutMs ?? CONSUMER_PROBE_TIMEOUT_MS);
      });
      await Promise.race([consumer.info(), late]);
      last = Date.now();
      if (!stopped) options.onIdle?.();
    } catch {
      // No answer in time, or the consumer is gone: recreate it after the last delivered event.
      if (!stopped && reset) reset();
      last = Date.now();
    } finally {
      clearTimeout(timer);
      probing = false;
    }
  };
  // A dropped connection lost whatever was pushed meanwhile, and maybe the consumer's node: probe
  // as soon as it is back instead of after a full idle interval. A drop shows as a new `lost`
  // promise (compared, not awaited: a finished read leaves no callback behind).
  let seenLoss = options.connection?.().lost;
  const timer = setInterval(() => {
    if (stopped || probing) return;
    const state = options.connection?.();
    if (state && state.lost !== seenLoss) {
      seenLoss = state.lost;
      last = 0;
    }
    if (Date.now() - last < probeMs) return;
    if (state && !state.connected) return; // nats.js holds requests until it has reconnected
    void probe();
  }, Math.max(50, probeMs / 4));
  return {
    activity: () => {
      last = Date.now();
    },
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
