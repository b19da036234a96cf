/**
 * Provisions the durable consumers of a worker: one on the event stream, one on the
 * dead-letter stream's redrive subject. An existing consumer is read, never re-added: on
 * nats-server 2.9 adding a durable that exists silently updates it (even its filter subject).
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { ResourceDriftError } from "@tidemark/shared";
import { declarationDrift, decodeDeclaration, encodeDeclaration, type Declaration, type StartPosition } from "./options.js";

const NS_PER_MS = 1_000_000;
const CONSUMER_NOT_FOUND = 10014;

export interface ConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** Start of a new consumer; an existing one resumes where it is. */
  start: StartPosition;
  declaration: Declaration;
}

/**
 * The consumer config. `max_deliver: -1` and no `backoff`: the worker counts attempts itself
 * (so an event whose last attempt died with its worker is still dead-lettered, not dropped by
 * the server) and schedules retries with `nak(delay)`. `max_ack_pending: -1` so events waiting
 * out a long backoff never stall the rest of the consumer.
 */
export function consumerConfig(spec: ConsumerSpec): Partial<ConsumerConfig> & { durable_name: string } {
  const config: Partial<ConsumerConfig> & { durable_name: string } = {
    durable_name: spec.durable,
    description: encodeDeclaration(spec.declaration),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    filter_subject: spec.filterSubject,
    ack_wait: spec.declaration.leaseMs * NS_PER_MS,
    max_deliver: -1,
    max_ack_pending: -1,
  };
  if (spec.start.kind === "latest") config.deliver_policy = DeliverPolicy.New;
  if (spec.start.kind === "after") {
    config.deliver_policy = DeliverPolicy.StartSequence;
    config.opt_start_seq = spec.start.sequence + 1;
  }
  return config;
}

/** Fields in which an existing consumer differs from the spec. */
export function consumerDrift(spec: ConsumerSpec, config: ConsumerConfig): string[] {
  const fields = declarationDrift(spec.declaration, decodeDeclaration(config.description));
  if (config.filter_subject !== spec.filterSubject && !fields.includes("tenantId")) fields.push("tenantId");
  if (config.ack_wait !== spec.declaration.leaseMs * NS_PER_MS && !fields.includes("delivery.leaseMs")) {
    fields.push("delivery.leaseMs");
  }
  if (config.ack_policy !== AckPolicy.Explicit && !fields.includes("consumer")) fields.push("consumer");
  return fields;
}

async function info(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.apiError().err_code === CONSUMER_NOT_FOUND) return undefined;
    throw err;
  }
}

function driftError(label: string, spec: ConsumerSpec, fields: string[], existing: ConsumerConfig): ResourceDriftError {
  const have = decodeDeclaration(existing.description);
  return new ResourceDriftError(
    `${label}: the consumer exists with other delivery settings (${fields.join(", ")}); ` +
      `broker has ${have ? JSON.stringify(have) : "a consumer not made by process()"}, ` +
      `declared ${JSON.stringify(spec.declaration)}; the consumer was not changed`,
    fields,
  );
}

/**
 * Creates the consumer when it is missing, otherwise checks it. Two processes that create the
 * same consumer at the same moment with different settings race (2.9 has no create-only
 * action): the read-back after creating catches the loser, which gets ResourceDriftError.
 */
export async function ensureConsumer(jsm: JetStreamManager, spec: ConsumerSpec, label: string): Promise<ConsumerInfo> {
  let existing = await info(jsm, spec.stream, spec.durable);
  if (!existing) {
    try {
      await jsm.consumers.add(spec.stream, consumerConfig(spec));
    } catch (err) {
      // A concurrent creator with another start position makes the server refuse ours.
      existing = await info(jsm, spec.stream, spec.durable);
      if (!existing) throw err;
    }
    existing = (await info(jsm, spec.stream, spec.durable)) ?? existing;
    if (!existing) throw new Error(`consumer ${spec.durable} vanished after it was created`);
  }
  const fields = consumerDrift(spec, existing.config);
  if (fields.length > 0) throw driftError(label, spec, fields, existing.config);
  return existing;
}
