/**
 * A consumer's dead letters: `replay()` reads them from the topic's dead-letter stream,
 * `redrive()` hands them back to the consumer's workers through the consumer's redrive
 * subject (a second subject in the same stream that every worker of the consumer pulls), and
 * deletes each letter only once its redriven copy is stored.
 */
import type { StoredMsg } from "@nats-io/jetstream";
import type { TopicRuntime } from "../core/runtime.js";
import type { DeadLetter, DeadLetters } from "../core/types.js";
import { decodeDeadLetterRecord, encodeDeadLetter, toDeadLetter } from "./dead-letter-record.js";
import { assertConsumerName } from "./options.js";
import { redriveSubject } from "../core/resources/broker-names.js";

/** Letters handed back at once by `redrive()`. */
const REDRIVE_WINDOW = 64;

class ConsumerDeadLetters<T> implements DeadLetters<T> {
  constructor(
    private readonly runtime: TopicRuntime,
    private readonly consumer: string,
  ) {}

  async *replay(options: { signal?: AbortSignal } = {}): AsyncIterable<DeadLetter<T>> {
    const { signal } = options;
    for await (const msg of this.stored(signal)) {
      const record = decodeDeadLetterRecord(msg.string());
      // Something published around Tidemark on this subject: not a letter, skip it.
      if (record) yield toDeadLetter<T>(record, msg.seq);
    }
  }

  async redrive(): Promise<number> {
    const { runtime, consumer } = this;
    let redriven = 0;
    try {
      const { js, jsm } = await runtime.ready();
      // Each letter: store its copy on the redrive subject, then (only then) delete it. The
      // dedupe id makes a redrive that stopped between the two steps safe to run again.
      const handBack = async (letter: DeadLetter<T>) => {
        const { sequence, ...rest } = letter;
        await js.publish(redriveSubject(runtime.names, consumer), encodeDeadLetter({ v: 1, ...rest }), {
          msgID: `redrive:${sequence}`,
          expect: { streamName: runtime.deadLetterStreamName },
        });
        await jsm.streams.deleteMessage(runtime.deadLetterStreamName, sequence, false);
      };
      let window: DeadLetter<T>[] = [];
      const flush = async () => {
        const results = await Promise.allSettled(window.map(handBack));
        window = [];
        redriven += results.filter((r) => r.status === "fulfilled").length;
        const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
        if (failed) throw failed.reason;
      };
      for await (const letter of this.replay()) {
        window.push(letter);
        if (window.length === REDRIVE_WINDOW) await flush();
      }
      await flush();
    } catch (err) {
      throw this.runtime.mapError(err);
    }
    return redriven;
  }

  /** Stored messages on the consumer's dead-letter subject, up to the stream's end at start. */
  private async *stored(signal: AbortSignal | undefined): AsyncGenerator<StoredMsg & { seq: number }> {
    const { runtime, consumer } = this;
    let handles;
    try {
      handles = await runtime.ready();
    } catch (err) {
      throw runtime.mapError(err);
    }
    const { js, jsm } = handles;
    const stream = runtime.deadLetterStreamName;
    const info = await jsm.streams.info(stream).catch((err: unknown) => {
      throw runtime.mapError(err);
    });
    const last = info.state.last_seq;
    if (info.state.messages === 0 || signal?.aborted) return;
    const oc = await js.consumers.get(stream, { filter_subjects: runtime.deadLetterSubject(consumer) });
    try {
      const ci = await oc.info(true);
      if (ci.num_pending === 0) return;
      const iter = await oc.consume({ max_messages: 256 });
      const onAbort = () => iter.stop();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        for await (const m of iter) {
          if (m.seq > last) break;
          yield m as unknown as StoredMsg & { seq: number };
          if (m.seq >= last || m.info.pending === 0 || signal?.aborted) break;
        }
      } finally {
        signal?.removeEventListener("abort", onAbort);
        iter.stop();
      }
    } catch (err) {
      throw runtime.mapError(err);
    } finally {
      await oc.delete().catch(() => undefined);
    }
  }
}

/** Dead letters of `consumer` on the runtime's topic. */
export function deadLettersFor<T>(runtime: TopicRuntime, consumer: string): DeadLetters<T> {
  assertConsumerName(consumer);
  return new ConsumerDeadLetters<T>(runtime, consumer);
}
