/**
 * Durable processing: `topic.process()` workers on JetStream durable consumers, with retries on
 * a backoff, dead letters, and redrive. The topic core calls `startWorker` and
 * `deadLettersFor`, which the entry points hand to every Sync they make (`workers`).
 */
export { workers } from "./feature.js";

export { startWorker } from "./start.js";
export { deadLettersFor } from "./dead-letters.js";
export { PROCESS_DEFAULTS, retryDelay } from "./options.js";
export { describeError } from "./dead-letter-record.js";
