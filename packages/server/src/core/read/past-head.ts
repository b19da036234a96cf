/**
 * The one rule for a cursor past the head: a cursor of this topic whose sequence is beyond the
 * stream's last sequence was never issued by the topic (only `cursorAt()` can make one), so every
 * path refuses it instead of waiting for, or skipping to, a position that does not exist.
 */
import { InvalidCursorError } from "@tidemark/shared";

/**
 * @internal Throws InvalidCursorError when `sequence` is past `headSequence`. The head must be read after
 * the cursor was issued (a read that starts after the call does): then a cursor the topic
 * issued is never past it.
 */
export function assertNotPastHead(topicId: string, sequence: number, headSequence: number): void {
  if (sequence > headSequence) {
    throw new InvalidCursorError(
      `cursor sequence ${sequence} is past the head (${headSequence}) of topic ${JSON.stringify(topicId)}: the topic never issued it`,
    );
  }
}
