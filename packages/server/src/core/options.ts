/** Resolves and validates a topic declaration once, at `sync.topic()`. */
import { assertTopicId, InvalidArgumentError } from "@tidemark/shared";
import type { ResolvedTopicOptions, TopicOptions } from "./types.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Room for headers and the dead-letter wrapper on top of the payload limit. */
export const HEADROOM_BYTES = 4 * KiB;

/** Defaults of a topic declaration. */
export const TOPIC_DEFAULTS = {
  owner: "",
  retention: { maxAgeMs: 7 * 24 * 3600_000, maxBytes: 64 * MiB },
  dedupeWindowMs: 120_000,
  maxPayloadBytes: 128 * KiB,
  replicas: 1,
} as const;

function positiveInt(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError(`${field} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** Applies defaults and checks what can never be valid; throws InvalidArgumentError naming the field. */
export function resolveTopicOptions(options: TopicOptions): ResolvedTopicOptions {
  if (typeof options !== "object" || options === null) throw new InvalidArgumentError("topic options are required");
  assertTopicId(options.id);
  const owner = options.owner ?? TOPIC_DEFAULTS.owner;
  if (typeof owner !== "string" || owner.length > 256) {
    throw new InvalidArgumentError("owner must be a string of at most 256 characters");
  }
  const maxAgeMs = positiveInt(options.retention?.maxAgeMs ?? TOPIC_DEFAULTS.retention.maxAgeMs, "retention.maxAgeMs");
  const maxBytes = positiveInt(options.retention?.maxBytes ?? TOPIC_DEFAULTS.retention.maxBytes, "retention.maxBytes");
  const maxPayloadBytes = positiveInt(options.maxPayloadBytes ?? TOPIC_DEFAULTS.maxPayloadBytes, "maxPayloadBytes");
  const deadLetterBytes = positiveInt(
    options.deadLetterRetention?.maxBytes ?? maxBytes,
    "deadLetterRetention.maxBytes",
  );
  // The server refuses a dedupe window longer than max_age.
  const dedupeWindowMs = Math.min(
    positiveInt(options.dedupeWindowMs ?? TOPIC_DEFAULTS.dedupeWindowMs, "dedupeWindowMs"),
    maxAgeMs,
  );
  const replicas = positiveInt(options.replicas ?? TOPIC_DEFAULTS.replicas, "replicas");
  if (replicas > 5) throw new InvalidArgumentError("replicas must be at most 5");
  // JetStream acknowledges a message larger than max_bytes and evicts it at once: such a
  // declaration would lose events, so it is refused here.
  const floor = maxPayloadBytes + HEADROOM_BYTES;
  if (maxBytes < floor) {
    throw new InvalidArgumentError(
      `retention.maxBytes (${maxBytes}) must be at least maxPayloadBytes + 4 KiB (${floor}) to hold one event`,
    );
  }
  if (deadLetterBytes < floor) {
    throw new InvalidArgumentError(
      `deadLetterRetention.maxBytes (${deadLetterBytes}) must be at least maxPayloadBytes + 4 KiB (${floor}) to hold one dead letter`,
    );
  }
  return {
    id: options.id,
    owner,
    retention: { maxAgeMs, maxBytes },
    deadLetterRetention: { maxBytes: deadLetterBytes },
    dedupeWindowMs,
    maxPayloadBytes,
    replicas,
  };
}
