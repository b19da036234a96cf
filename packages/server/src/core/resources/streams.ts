/**
 * Stream configurations of a topic and the declaration they record. One topic is one event
 * stream plus one dead-letter stream; tenants are subject tokens inside them. Their names and
 * subjects come from `broker-names.ts`.
 */
import { deadLetterFilter, eventFilter, liveSubject, type TopicNames } from "./broker-names.js";
import type { StreamConfig } from "@nats-io/jetstream";
import { HEADROOM_BYTES } from "../options.js";
import type { ResolvedTopicOptions } from "../types.js";

const NS_PER_MS = 1_000_000;

/**
 * The declaration a stream records: the owner, the payload limit and the stream's incarnation.
 * On nats-server 2.10+ it is the stream's metadata (`tidemark.*` keys); the description holds
 * the same as JSON on every version — 2.9 has no metadata, and Tidemark releases before 2.10
 * support read only the description, so both keep recognising the topic in a rolling deploy.
 * Reads take the metadata when present, else the description: streams made on 2.9 or by older
 * releases keep working after a server upgrade, and drift checks compare the same fields.
 */
export interface StreamDescription {
  tidemark: 1;
  kind: "events" | "dead-letters";
  topic: string;
  owner: string;
  maxPayloadBytes: number;
  incarnation: string;
}

export function parseDescription(text: string | undefined): StreamDescription | undefined {
  if (!text) return undefined;
  try {
    const d = JSON.parse(text) as StreamDescription;
    return d && d.tidemark === 1 && typeof d.incarnation === "string" ? d : undefined;
  } catch {
    return undefined;
  }
}

const META = {
  version: "tidemark.version",
  kind: "tidemark.kind",
  topic: "tidemark.topic",
  owner: "tidemark.owner",
  maxPayloadBytes: "tidemark.max_payload_bytes",
  incarnation: "tidemark.incarnation",
} as const;

function toMetadata(d: StreamDescription): Record<string, string> {
  return {
    [META.version]: String(d.tidemark),
    [META.kind]: d.kind,
    [META.topic]: d.topic,
    [META.owner]: d.owner,
    [META.maxPayloadBytes]: String(d.maxPayloadBytes),
    [META.incarnation]: d.incarnation,
  };
}

function fromMetadata(m: Record<string, string> | undefined): StreamDescription | undefined {
  const incarnation = m?.[META.incarnation];
  if (m?.[META.version] !== "1" || !incarnation) return undefined;
  const kind = m[META.kind];
  if (kind !== "events" && kind !== "dead-letters") return undefined;
  return {
    tidemark: 1,
    kind,
    topic: m[META.topic] ?? "",
    owner: m[META.owner] ?? "",
    maxPayloadBytes: Number(m[META.maxPayloadBytes]),
    incarnation,
  };
}

/** The declaration of a stream config: its metadata (2.10+) when it has ours, else its description. */
export function parseDeclaration(config: { description?: string; metadata?: Record<string, string> }): StreamDescription | undefined {
  return fromMetadata(config.metadata) ?? parseDescription(config.description);
}

/** A fresh incarnation id: 10 base-36 characters. */
export function newIncarnation(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n.toString(36).padStart(10, "0").slice(-10);
}

type StreamDeclaration = Partial<StreamConfig> & { name: string };

/**
 * A topic stream's consumer limit: none in practice. Tidemark bounds its own consumers (a feed per
 * bridge and topic, `maxCatchUps` replays; a consumer per bridge and tenant in hub mode
 * "tenant": docs/deployment.md, "Consumers"). Up to nats-server 2.14, `-1` meant no limit; 2.15
 * reads it as its default of 1,000 per stream, which a reconnect storm or a busy "tenant" hub
 * passes ("maximum consumers limit reached"). An account's own consumer limit still applies:
 * where it is lower the stream is made with `-1` (provision.ts).
 */
export const STREAM_MAX_CONSUMERS = 2_147_483_647;

// What both streams of a topic share: limits retention on file, the declaration in the
// description, the topic's age limit and replicas.
function topicStream(
  kind: StreamDescription["kind"],
  name: string,
  subjects: string,
  maxBytes: number,
  o: ResolvedTopicOptions,
  incarnation: string,
  metadata: boolean,
): StreamDeclaration {
  const description: StreamDescription = {
    tidemark: 1,
    kind,
    topic: o.id,
    owner: o.owner,
    maxPayloadBytes: o.maxPayloadBytes,
    incarnation,
  };
  return {
    name,
    description: JSON.stringify(description),
    ...(metadata ? { metadata: toMetadata(description) } : {}),
    subjects: [subjects],
    retention: "limits" as StreamConfig["retention"],
    storage: "file" as StreamConfig["storage"],
    discard: "old" as StreamConfig["discard"],
    max_age: o.retention.maxAgeMs * NS_PER_MS,
    max_bytes: maxBytes,
    max_msg_size: o.maxPayloadBytes + HEADROOM_BYTES,
    max_msgs: -1,
    max_consumers: STREAM_MAX_CONSUMERS,
    // resolveTopicOptions already capped the window at maxAgeMs (the server refuses longer).
    duplicate_window: o.dedupeWindowMs * NS_PER_MS,
    num_replicas: o.replicas,
  };
}

/** Config of the event stream; `metadata`: the server has stream metadata (2.10+). */
export function eventStreamConfig(names: TopicNames, o: ResolvedTopicOptions, incarnation: string, metadata = false): StreamDeclaration {
  return {
    ...topicStream("events", names.stream, eventFilter(names, undefined), o.retention.maxBytes, o, incarnation, metadata),
    allow_direct: true,
    // Stored events are republished on core subjects with their sequence in headers: live()
    // readers subscribe there and need no consumer each.
    republish: { src: eventFilter(names, undefined), dest: liveSubject(names, undefined) },
  };
}

/** Config of the dead-letter stream. */
export function deadLetterStreamConfig(names: TopicNames, o: ResolvedTopicOptions, incarnation: string, metadata = false): StreamDeclaration {
  return topicStream("dead-letters", names.deadLetterStream, deadLetterFilter(names), o.deadLetterRetention.maxBytes, o, incarnation, metadata);
}

/** Fields of the declaration that must match the broker, read back from a stream config. */
export function declaredFields(config: StreamConfig, description: StreamDescription | undefined) {
  return {
    owner: description?.owner,
    "retention.maxAgeMs": Math.round(config.max_age / NS_PER_MS),
    "retention.maxBytes": config.max_bytes,
    dedupeWindowMs: Math.round((config.duplicate_window ?? 0) / NS_PER_MS),
    maxPayloadBytes: description?.maxPayloadBytes,
    replicas: config.num_replicas,
  } as Record<string, unknown>;
}

export function expectedFields(o: ResolvedTopicOptions): Record<string, unknown> {
  return {
    owner: o.owner,
    "retention.maxAgeMs": o.retention.maxAgeMs,
    "retention.maxBytes": o.retention.maxBytes,
    dedupeWindowMs: o.dedupeWindowMs,
    maxPayloadBytes: o.maxPayloadBytes,
    replicas: o.replicas,
  };
}
