/**
 * The worker module's part of a Sync platform: `topic.process()` and `topic.deadLetters()`.
 * Entry points pass {@link workers} to `createSyncWith()`; importing this module does nothing
 * by itself.
 */
import type { Workers } from "../core/sync.js";
import { deadLettersFor } from "./dead-letters.js";
import { startWorker } from "./start.js";

/** @internal */
export const workers: Workers = { process: startWorker, deadLetters: deadLettersFor };
