/**
 * Provisions the durable consumers of a worker: one on the event stream, one on the
 * dead-letter stream's redrive subject. An existing consumer is read, never re-added with
 * other settings: on nats-server 2.9 adding a durable that exists silently updates it (even
 * its filter subject).
 */
import {
  AckPolicy,
  DeliverPolicy,
  ReplayPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { ResourceDriftError } from "@tidemark/shared";
import { isConsumerNotFound, isNoResponders, isWrongLastSequence } from "../core/errors.js";
import { sleep } from "../core/sleep.js";
import { declarationDrift, decodeDeclaration, encodeDeclaration, type Declaration, type StartPosition } from "./options.js";

const NS_PER_MS = 1_000_000;
/** Waits before each new try of a claim no server took (about 1.5 s in all). */
const CLAIM_NO_RESPONDERS_RETRY_MS = [50, 100, 200, 400, 800];
/** The ack wait nats-server applies when a config has none. */
const SERVER_ACK_WAIT_MS = 30_000;

/** The lease a consumer's config makes the broker enforce, in ms. */
export function ackWaitMs(config: Pick<ConsumerConfig, "ack_wait">): number {
  return config.ack_wait === undefined ? SERVER_ACK_WAIT_MS : config.ack_wait / NS_PER_MS;
}

export interface ConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** Start of a new consumer; an existing one resumes where it is. */
  start: StartPosition;
  declaration: Declaration;
  /**
   * The lease was not declared: the lease of a consumer that exists (or of another process's
   * creation claim) is taken over instead of being drift. Consumers made by an older release
   * (30 s by default) keep working with their lease.
   */
  adoptLease: boolean;
}

/** `spec` with the lease `leaseMs` when it adopts leases. */
function withLease<S extends ConsumerSpec>(spec: S, leaseMs: number): S {
  return spec.adoptLease ? { ...spec, declaration: { ...spec.declaration, leaseMs } } : spec;
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

/**
 * Fields in which an existing consumer differs from the spec. The lease is compared with the
 * ack wait the broker enforces, not with the description (which records the lease the consumer
 * was created with), so an operator's change of the ack wait is the lease from then on.
 */
export function consumerDrift(spec: ConsumerSpec, config: ConsumerConfig): string[] {
  const fields = declarationDrift(spec.declaration, decodeDeclaration(config.description), false);
  if (config.filter_subject !== spec.filterSubject && !fields.includes("tenantId")) fields.push("tenantId");
  if (!spec.adoptLease && ackWaitMs(config) !== spec.declaration.leaseMs) fields.push("delivery.leaseMs");
  if (config.ack_policy !== AckPolicy.Explicit && !fields.includes("consumer")) fields.push("consumer");
  return fields;
}

async function info(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (err) {
    if (isConsumerNotFound(err)) return undefined;
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

/** Where concurrent first declarations of one consumer take turns (see {@link ensureConsumers}). */
export interface CreationClaim {
  js: JetStreamClient;
  /** The dead-letter stream. */
  stream: string;
  /** `<dead-letter subject>.declare`: holds a declaration only while it is being created. */
  subject: string;
}

/** A claim older than this was left by a process that died while creating: it may be replaced. */
const STALE_CLAIM_MS = 10_000;
const ROUNDS = 8;

/**
 * Creates the worker's consumers when the first is missing, otherwise checks it for drift.
 *
 * nats-server 2.9 has no create-only action, and adding a durable that exists updates it. So
 * a first creation is claimed: the declaration is published on the claim subject with
 * `Nats-Expected-Last-Subject-Sequence: 0`, which only one publisher wins. The winner reads
 * the consumer again (a winner that comes after another's claim was released finds it made),
 * adds the consumers if still missing, and then releases the claim. A loser compares the
 * claimed declaration with its own: different settings are drift; the same settings add the
 * same config, which changes nothing. The consumer is thus never changed by a declaration
 * that differs from the one that made it.
 */
export async function ensureConsumers(
  jsm: JetStreamManager,
  claim: CreationClaim,
  specs: [ConsumerSpec, ...ConsumerSpec[]],
  label: string,
): Promise<ConsumerInfo> {
  const [main] = specs;
  const addAll = async (leaseMs = main.declaration.leaseMs) => {
    for (const spec of specs) await jsm.consumers.add(spec.stream, consumerConfig(withLease(spec, leaseMs)));
  };
  for (let round = 0; round < ROUNDS; round++) {
    const existing = await info(jsm, main.stream, main.durable);
    if (existing) {
      const leaseMs = ackWaitMs(existing.config);
      const fields = consumerDrift(withLease(main, leaseMs), existing.config);
      if (fields.length > 0) throw driftError(label, main, fields, existing.config);
      // The companion consumers carry the same declaration: made alike, or (re)made alike.
      for (const spec of specs.slice(1).map((s) => withLease(s, leaseMs))) {
        if (!(await info(jsm, spec.stream, spec.durable))) await jsm.consumers.add(spec.stream, consumerConfig(spec));
      }
      return existing;
    }
    const outcome = await tryClaim(jsm, claim, main.declaration, 0);
    if (outcome.won) {
      try {
        if (!(await info(jsm, main.stream, main.durable))) await addAll();
      } finally {
        await jsm.streams.purge(claim.stream, { filter: claim.subject }).catch(() => undefined);
      }
      continue;
    }
    if (!outcome.held) continue; // released meanwhile: look again
    const theirs = outcome.held.declaration;
    const fields = declarationDrift(main.declaration, theirs, !main.adoptLease);
    if (theirs && fields.length === 0) {
      await addAll(theirs.leaseMs);
      continue;
    }
    if (outcome.held.ageMs > STALE_CLAIM_MS) {
      // Left by a process that died between claiming and releasing: take it over.
      const retaken = await tryClaim(jsm, claim, main.declaration, outcome.held.sequence);
      if (retaken.won) await jsm.streams.purge(claim.stream, { filter: claim.subject }).catch(() => undefined);
      continue;
    }
    throw new ResourceDriftError(
      `${label}: another process is creating the consumer with other delivery settings (${fields.join(", ")}); ` +
        `it declares ${JSON.stringify(outcome.held.declaration)}, this one ${JSON.stringify(main.declaration)}; the consumer was not changed`,
      fields,
    );
  }
  throw new Error(`${label}: the consumer could not be created after ${ROUNDS} rounds of contention`);
}

type ClaimOutcome =
  | { won: true }
  | { won: false; held?: { declaration: Declaration | undefined; sequence: number; ageMs: number } };

async function tryClaim(
  jsm: JetStreamManager,
  claim: CreationClaim,
  declaration: Declaration,
  expected: number,
): Promise<ClaimOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      await claim.js.publish(claim.subject, encodeDeclaration(declaration), {
        expect: { lastSubjectSequence: expected, streamName: claim.stream },
      });
      return { won: true };
    } catch (err) {
      // A stream just made on a cluster may not have its subjects' interest on this client's node
      // yet: nothing was stored, so the claim is sent again (seen in the broker-loss fault suite).
      if (isNoResponders(err) && attempt < CLAIM_NO_RESPONDERS_RETRY_MS.length) {
        await sleep(CLAIM_NO_RESPONDERS_RETRY_MS[attempt]!);
        continue;
      }
      if (!isWrongLastSequence(err)) throw err;
      break;
    }
  }
  const held = await jsm.streams.getMessage(claim.stream, { last_by_subj: claim.subject });
  if (!held) return { won: false };
  return {
    won: false,
    held: { declaration: decodeDeclaration(held.string()), sequence: held.seq, ageMs: Date.now() - held.time.getTime() },
  };
}
