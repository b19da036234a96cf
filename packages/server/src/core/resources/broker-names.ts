/**
 * What Tidemark creates and uses on the broker, by name: every stream, subject and consumer
 * name is made here and nowhere else. Per topic (`<ns>` the Sync's namespace, `<topic>` the
 * topic id with dots as `~`, see `topicToken()`, `<tenant>` the encoded tenant):
 *
 * - event stream `TMEV_<ns>_<topic>` on `tm.<ns>.<topic>.<tenant>`, republished for live() on
 *   `tmlive.<ns>.<topic>.<tenant>` (core NATS, not stored);
 * - dead-letter stream `TMDL_<ns>_<topic>`: a consumer's dead letters on
 *   `tmdl.<ns>.<topic>.<consumer>`, its redriven letters on `….<consumer>.redrive`, and while a
 *   process creates the consumer, its declaration on `….<consumer>.declare`;
 * - per `process()` consumer, one durable `<ns>_<topic>_<consumer>` on each of the two streams;
 * - per read (replay, follow, hub follower), an ordered consumer named `tmr_<nuid>_<n>`.
 *
 * - per namespace, the checkpoints' KV bucket `TMCP_<ns>` (stream `KV_TMCP_<ns>`), one key
 *   `<topic with / for .>.<name>.<tenant>` per checkpoint.
 *
 * Nothing else is created. `brokerNames()` lists it all for one example (the
 * snapshot test in broker-names.test.ts shows it).
 */
import { encodeTenant, NO_TENANT_TOKEN, toBase64Url, topicToken } from "@tidemark/shared";

/** Stream-name prefix of a namespace's event streams (`listTopics()` finds topics by it). */
export function eventStreamPrefix(namespace: string): string {
  return `TMEV_${namespace}_`;
}

/** Stream-name prefix of a namespace's dead-letter streams. */
export function deadLetterStreamPrefix(namespace: string): string {
  return `TMDL_${namespace}_`;
}

/** @internal Names and subject bases of one topic. */
export interface TopicNames {
  stream: string;
  deadLetterStream: string;
  /** `tm.<ns>.<topic>` — events are `<base>.<tenant token>` */
  base: string;
  deadLetterBase: string;
  liveBase: string;
}

export function topicNames(namespace: string, id: string): TopicNames {
  const t = topicToken(id);
  return {
    stream: `${eventStreamPrefix(namespace)}${t}`,
    deadLetterStream: `${deadLetterStreamPrefix(namespace)}${t}`,
    base: `tm.${namespace}.${t}`,
    deadLetterBase: `tmdl.${namespace}.${t}`,
    liveBase: `tmlive.${namespace}.${t}`,
  };
}

/** Subject of an event of `tenantId` (or of no tenant). */
export function eventSubject(names: TopicNames, tenantId: string | undefined): string {
  return `${names.base}.${encodeTenant(tenantId)}`;
}

/** Read filter: one tenant, or every event of the topic. */
export function eventFilter(names: TopicNames, tenantId: string | undefined): string {
  return tenantId === undefined ? `${names.base}.>` : eventSubject(names, tenantId);
}

/** live() subscription subject: one tenant, or every event of the topic. */
export function liveSubject(names: TopicNames, tenantId: string | undefined): string {
  return tenantId === undefined ? `${names.liveBase}.>` : `${names.liveBase}.${encodeTenant(tenantId)}`;
}

/** Subjects of the dead-letter stream: every consumer's letters, redrives and claims. */
export function deadLetterFilter(names: TopicNames): string {
  return `${names.deadLetterBase}.>`;
}

/** Subject of `consumer`'s dead letters inside the dead-letter stream. */
export function deadLetterSubject(names: TopicNames, consumer: string): string {
  return `${names.deadLetterBase}.${consumer}`;
}

/** Subject on which `consumer`'s redriven letters wait for its workers. */
export function redriveSubject(names: TopicNames, consumer: string): string {
  return `${deadLetterSubject(names, consumer)}.redrive`;
}

/** Subject that holds `consumer`'s declaration while a process is creating it. */
export function claimSubject(names: TopicNames, consumer: string): string {
  return `${deadLetterSubject(names, consumer)}.declare`;
}

/**
 * Durable name of `consumer` on a topic: namespace, topic token and consumer joined by `_`, so
 * `nats consumer ls` shows whose it is. Unique per topic because each topic owns its streams.
 */
export function durableName(namespace: string, topicId: string, consumer: string): string {
  return `${namespace}_${topicToken(topicId)}_${consumer}`;
}

/** Name prefix of one read's ordered consumer (`<prefix>_1` once created); `unique` is a nuid. */
export function readerConsumerPrefix(unique: string): string {
  return `tmr_${unique}`;
}

const PLAIN_TENANT = /^[A-Za-z0-9-]+$/;

/** KV bucket of a namespace's checkpoints. */
export function checkpointBucket(namespace: string): string {
  return `TMCP_${namespace}`;
}

/**
 * Key of one checkpoint: `<topic>.<name>.<tenant>`. KV keys allow `[-/_=.A-Za-z0-9]`, so the
 * topic's dots become `/` and a tenant that is not plain becomes `=` + base64url (the subjects'
 * `~` is not a valid key character); `_` is no tenant. Each token is injective.
 */
export function checkpointKey(topicId: string, name: string, tenantId: string | undefined): string {
  const tenant =
    tenantId === undefined ? NO_TENANT_TOKEN : PLAIN_TENANT.test(tenantId) ? tenantId : "=" + toBase64Url(tenantId);
  return `${topicId.replace(/\./g, "/")}.${name}.${tenant}`;
}

/** KV bucket of read states: one per namespace. */
export function readStateBucket(namespace: string): string {
  return `TMRS_${namespace}`;
}

/**
 * Key of one read state: `<topic>.<principal id>.<tenant>`, tokens as in {@link checkpointKey};
 * the principal id is base64url (a valid key token as it is).
 */
export function readStateKey(topicId: string, principalId: string, tenantId: string | undefined): string {
  return checkpointKey(topicId, principalId, tenantId);
}

/** Everything Tidemark names on the broker for one topic, tenant and consumer. */
export function brokerNames(at: { namespace: string; topic: string; tenantId: string | undefined; consumer: string; checkpoint: string }) {
  const names = topicNames(at.namespace, at.topic);
  return {
    eventStream: names.stream,
    eventStreamSubjects: eventFilter(names, undefined),
    eventSubject: eventSubject(names, at.tenantId),
    liveSubject: liveSubject(names, at.tenantId),
    liveRepublish: { src: eventFilter(names, undefined), dest: liveSubject(names, undefined) },
    deadLetterStream: names.deadLetterStream,
    deadLetterStreamSubjects: deadLetterFilter(names),
    deadLetterSubject: deadLetterSubject(names, at.consumer),
    redriveSubject: redriveSubject(names, at.consumer),
    claimSubject: claimSubject(names, at.consumer),
    durable: durableName(at.namespace, at.topic, at.consumer),
    readerConsumer: `${readerConsumerPrefix("<nuid>")}_1`,
    checkpointBucket: checkpointBucket(at.namespace),
    checkpointStream: `KV_${checkpointBucket(at.namespace)}`,
    checkpointKey: checkpointKey(at.topic, at.checkpoint, at.tenantId),
  };
}
