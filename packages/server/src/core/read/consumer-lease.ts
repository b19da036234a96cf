/**
 * @internal The ordered JetStream consumer of one read, with its release. The consumer's name is
 * chosen here, so a creation whose answer was lost (a timeout) can still be deleted, and every
 * open consumer is counted on the Sync (`sync.stats().consumers`).
 */
import { nuid } from "@nats-io/nats-core";
import type { OrderedPushConsumerOptions, PushConsumer } from "@nats-io/jetstream";
import type { TopicHandles, TopicRuntime } from "../runtime.js";
import { readerConsumerPrefix } from "../resources/broker-names.js";

export interface ConsumerLease {
  consumer: PushConsumer;
  /** Deletes the consumer (best-effort) and stops counting it; safe to call twice. */
  release(): Promise<void>;
}

export async function openConsumer(
  rt: TopicRuntime,
  h: TopicHandles,
  options: Partial<OrderedPushConsumerOptions>,
): Promise<ConsumerLease> {
  const prefix = readerConsumerPrefix(nuid.next());
  let consumer: PushConsumer;
  try {
    consumer = await h.js.consumers.getPushConsumer(rt.streamName, { ...options, name_prefix: prefix });
  } catch (err) {
    // The server may have created it and the answer been lost: delete it by name.
    await h.jsm.consumers.delete(rt.streamName, `${prefix}_1`).catch(() => undefined);
    throw rt.mapError(err);
  }
  rt.trackConsumer(1);
  let released = false;
  return {
    consumer,
    async release() {
      if (released) return;
      released = true;
      try {
        await consumer.delete();
      } catch {
        // Gone already, or the broker is away: the server removes it 5 minutes after its
        // deliver subject lost its last subscriber (nats.js sets that inactive_threshold on
        // every ordered consumer; docs/core.md, "A server-side backstop").
      } finally {
        rt.trackConsumer(-1);
      }
    },
  };
}
