/**
 * The retained window of a topic as the hub's watermark checks see it: one stream-info request
 * per topic answers every hub of the topic (head, first retained sequence, incarnation). A topic
 * of a Sync is read through its runtime handle (core/runtime.ts), not its class.
 */
import type { Topic } from "../core/types.js";
import { runtimeHandle } from "../core/runtime.js";
import { firstRetained, incarnationOf as streamIncarnation } from "../core/read/reader.js";
import { incarnationOf } from "./incarnation.js";

/** @internal */
export interface TopicWindow {
  /** Last stream sequence. */
  head: number;
  /** First retained sequence (head + 1 when nothing is retained); undefined when the topic cannot tell. */
  first: number | undefined;
  /** Incarnation of the stream (undefined when the topic's cursors do not name one). */
  incarnation: string | undefined;
  /**
   * Retention may start moving the front soon: the stream holds at least half its byte limit,
   * or its oldest event is past half its age limit.
   */
  filling: boolean;
}

/**
 * Reads the window, or undefined while the stream does not exist (destroyed and not re-created:
 * reading it must not provision it again). A topic of another implementation is read with
 * `head()` and reports no first sequence.
 */
export async function readWindow(topic: Topic<unknown>): Promise<TopicWindow | undefined> {
  const runtime = runtimeHandle(topic);
  if (runtime) {
    const info = await runtime.streamInfo();
    if (!info) return undefined;
    const { state, config } = info;
    const maxAgeMs = config.max_age / 1e6;
    const filling =
      (config.max_bytes > 0 && state.bytes * 2 >= config.max_bytes) ||
      (maxAgeMs > 0 && state.messages > 0 && (Date.now() - Date.parse(state.first_ts)) * 2 >= maxAgeMs);
    return { head: state.last_seq, first: firstRetained(info), incarnation: streamIncarnation(info), filling };
  }
  const head = await topic.head();
  return { head: topic.cursorSequence(head), first: undefined, incarnation: incarnationOf(head), filling: false };
}
