import { BrokerUnavailableError, CursorMismatchError, TopicNotFoundError } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { recreated, sameIncarnation } from "./incarnation.js";
import { readWindow } from "./window.js";

/** Looks at the window this many times (250, 500 ms apart) when the look itself fails. */
const LOOKS = 3;

/**
 * What a failed read of a hub means. A read whose stream is destroyed under it (between its
 * window read and its consumer's creation, say) fails with whatever the broker says then
 * ("stream not found"); when the stream is gone or exists with another incarnation, that failure
 * IS the end of the incarnation the hub follows: its subscribers get the mismatch (and resume
 * from the new head), not an internal error. A "not found" while the stream is there in the
 * hub's incarnation raced its re-creation: it is broker trouble to retry, not the end of the
 * topic. Stream-info looks, only on failure, that never provision the topic again; a look that
 * fails (a loaded broker) is tried again before the failure is passed on as it was.
 */
export async function failureOf(err: unknown, topic: Topic<unknown>, incarnation: string | undefined): Promise<unknown> {
  if (err instanceof CursorMismatchError) return err;
  for (let look = 1; ; look++) {
    try {
      const window = await readWindow(topic);
      if (!window || !sameIncarnation(window.incarnation, incarnation)) return recreated(topic.id);
      if (!(err instanceof TopicNotFoundError)) return err;
      return new BrokerUnavailableError(`topic ${JSON.stringify(topic.id)}: the stream was not found, then found again in the same incarnation; retry the read`, { cause: err });
    } catch {
      if (look >= LOOKS) return err;
      await new Promise((r) => setTimeout(r, 250 * look));
    }
  }
}
