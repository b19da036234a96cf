/**
 * Provisions a topic's two streams on first use and checks the declaration against what the
 * broker holds. Nothing existing is changed, except the dead-letter byte limit (see below) and
 * an event stream's consumer limit left at nats-server 2.15's default (liftConsumerLimit).
 */
import type { JetStreamManager, StreamConfig, StreamInfo, StreamUpdateConfig } from "@nats-io/jetstream";
import { InternalError, ResourceDriftError, StorageLimitError } from "@tidemark/shared";
import { isMaximumConsumersLimit, isStorageRefused, isStoreCreateFailed, isStreamNameInUse, isStreamNotFound, mapNatsError } from "../errors.js";
import {
  declaredFields,
  deadLetterStreamConfig,
  eventStreamConfig,
  expectedFields,
  newIncarnation,
  parseDeclaration,
  STREAM_MAX_CONSUMERS,
} from "./streams.js";
import type { TopicNames } from "./broker-names.js";
import type { ResolvedTopicOptions } from "../types.js";
import { sleep } from "../sleep.js";

export interface ProvisionContext {
  jsm: JetStreamManager;
  names: TopicNames;
  options: ResolvedTopicOptions;
  /** The server's file-store limit when known (embedded), for error messages. */
  maxFileStore?: number;
  /** The server has stream metadata (2.10+): the declaration is recorded there too. */
  metadata?: boolean;
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (isStreamNotFound(err)) return undefined;
    throw mapNatsError(err, `stream info ${name}`);
  }
}

function drift(kind: string, id: string, fields: string[], detail: string[]): ResourceDriftError {
  return new ResourceDriftError(
    `topic ${JSON.stringify(id)}: the declaration differs from the existing ${kind} (${detail.join("; ")}); the resource was not changed`,
    fields,
  );
}

function checkDrift(ctx: ProvisionContext, info: StreamInfo): string {
  const desc = parseDeclaration(info.config);
  if (!desc || desc.kind !== "events") {
    throw new ResourceDriftError(
      `stream ${info.config.name} exists but was not made by Tidemark for topic ${JSON.stringify(ctx.options.id)}`,
      ["stream"],
    );
  }
  const have = declaredFields(info.config, desc);
  const want = expectedFields(ctx.options);
  const fields = Object.keys(want).filter((k) => have[k] !== want[k]);
  if (fields.length > 0) {
    throw drift("stream", ctx.options.id, fields, fields.map((f) => `${f}: broker has ${JSON.stringify(have[f])}, declared ${JSON.stringify(want[f])}`));
  }
  return desc.incarnation;
}

/**
 * Waits before each new try of a create the broker's store failed (about 2.5 s in all). Deleting
 * a stream returns before nats-server has removed its directory (2.10+ removes it in the
 * background, 2.9 takes the account's directory with its last stream), and a create meanwhile
 * can fail to make its own; a moment later it goes through. A lasting store failure (a full or
 * read-only disk) still fails, this much later.
 */
const STORE_RETRY_MS = [50, 100, 200, 400, 800, 1_000];

async function create(ctx: ProvisionContext, config: Partial<StreamConfig> & { name: string }): Promise<"created" | "exists"> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.jsm.streams.add(config);
      return "created";
    } catch (err) {
      if (isStreamNameInUse(err)) return "exists";
      // The account limits consumers below the stream's limit: the account's limit rules.
      if (isMaximumConsumersLimit(err) && config.max_consumers !== -1) {
        config = { ...config, max_consumers: -1 };
        continue;
      }
      if (isStoreCreateFailed(err) && attempt < STORE_RETRY_MS.length) {
        await sleep(STORE_RETRY_MS[attempt]!);
        continue;
      }
      if (isStorageRefused(err)) {
        const reserve = (config.max_bytes ?? 0) * (config.num_replicas ?? 1);
        const limit = ctx.maxFileStore !== undefined ? `${ctx.maxFileStore} bytes (the embedded server's max_file_store)` : "the server's JetStream max_file_store or the account's storage limit";
        throw new StorageLimitError(
          `cannot create stream ${config.name}: JetStream reserves max_bytes x replicas = ${reserve} bytes at creation, ` +
            `which does not fit under ${limit} with the streams that exist. Lower retention.maxBytes, ` +
            `retire unused topics (listTopics/destroy), or raise the limit.`,
          { cause: err },
        );
      }
      throw mapNatsError(err, `create stream ${config.name}`);
    }
  }
}

/**
 * Makes sure both streams exist and match the declaration; returns the incarnation.
 * The dead-letter byte limit is the one setting applied to an existing stream: raised always,
 * lowered only while the stream holds no more than the new limit — otherwise it keeps its old
 * limit and this throws ResourceDriftError (so every use fails until it holds less).
 */
export async function provisionTopic(ctx: ProvisionContext): Promise<string> {
  const { jsm, names, options } = ctx;
  let incarnation: string | undefined;
  let createdHere = false;
  for (let attempt = 0; attempt < 3 && incarnation === undefined; attempt++) {
    const info = await streamInfo(jsm, names.stream);
    if (info) {
      incarnation = checkDrift(ctx, info);
      await liftConsumerLimit(ctx, info);
    } else {
      const fresh = newIncarnation();
      // Another process may create it at the same moment: then read theirs and compare.
      if ((await create(ctx, eventStreamConfig(names, options, fresh, ctx.metadata))) === "created") {
        incarnation = fresh;
        createdHere = true;
      }
    }
  }
  if (incarnation === undefined) throw new InternalError(`could not provision stream ${names.stream}`);

  const dlq = await streamInfo(jsm, names.deadLetterStream);
  const wanted = deadLetterStreamConfig(names, options, incarnation, ctx.metadata);
  if (!dlq) {
    let made: "created" | "exists";
    try {
      made = await create(ctx, wanted);
    } catch (err) {
      // The pair does not fit: remove the (empty) event stream made just now, so a refused
      // declaration leaves nothing behind and reserves nothing. No other process can have
      // written to it: their provisioning needs the same dead-letter stream.
      if (createdHere && err instanceof StorageLimitError) await jsm.streams.delete(names.stream).catch(() => undefined);
      throw err;
    }
    if (made === "created") return incarnation;
    return provisionTopic(ctx);
  }
  if (dlq.config.max_bytes !== options.deadLetterRetention.maxBytes) {
    if (dlq.state.bytes > options.deadLetterRetention.maxBytes) {
      throw drift("dead-letter stream", options.id, ["deadLetterRetention.maxBytes"], [
        `it holds ${dlq.state.bytes} bytes, more than the declared limit ${options.deadLetterRetention.maxBytes}; ` +
          `it keeps its limit ${dlq.config.max_bytes} until it holds less`,
      ]);
    }
    try {
      await jsm.streams.update(names.deadLetterStream, { ...dlq.config, max_bytes: options.deadLetterRetention.maxBytes });
    } catch (err) {
      throw mapNatsError(err, `update dead-letter limit of ${names.deadLetterStream}`);
    }
  }
  return incarnation;
}

/**
 * An event stream made with `max_consumers: -1` (by Tidemark before STREAM_MAX_CONSUMERS, or on
 * an account with a consumer limit) is capped at 1,000 consumers by nats-server 2.15: raise it.
 * Best effort: 2.9 cannot change the setting (and has no such default), and an account limit
 * refuses it (that limit applies anyway); either way the stream is used as it is.
 */
async function liftConsumerLimit(ctx: ProvisionContext, info: StreamInfo): Promise<void> {
  if (info.config.max_consumers !== -1 || !ctx.metadata) return;
  // nats.js types the setting as fixed (it was, before 2.10); the server takes the change.
  const lifted = { max_consumers: STREAM_MAX_CONSUMERS } as Partial<StreamUpdateConfig>;
  await ctx.jsm.streams.update(info.config.name, lifted).catch(() => undefined);
}

/** Reads the current incarnation of an existing topic, or undefined when it does not exist. */
export async function readIncarnation(jsm: JetStreamManager, names: TopicNames): Promise<string | undefined> {
  const info = await streamInfo(jsm, names.stream);
  return info ? parseDeclaration(info.config)?.incarnation : undefined;
}

export { streamInfo };
