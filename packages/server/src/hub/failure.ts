import { CursorMismatchError } from "@tidemark/shared";
import type { Topic } from "../core/types.js";
import { recreated, sameIncarnation } from "./incarnation.js";
import { readWindow } from "./window.js";

/**
 * What a failed read of a hub means. A read whose stream is destroyed under it (between its
 * window read and its consumer's creation, say) fails with whatever the broker says then
 * ("stream not found"); when the stream is gone or exists with another incarnation, that failure
 * IS the end of the incarnation the hub follows: its subscribers get the mismatch (and resume
 * from the new head), not an internal error. One stream-info look, only on failure, that never
 * provisions the topic again.
 */
export async function failureOf(err: unknown, topic: Topic<unknown>, incarnation: string | undefined): Promise<unknown> {
  if (err instanceof CursorMismatchError) return err;
  try {
    const window = await readWindow(topic);
    return window && sameIncarnation(window.incarnation, incarnation) ? err : recreated(topic.id);
  } catch {
    return err;
  }
}
