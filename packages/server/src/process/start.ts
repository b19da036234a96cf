/**
 * Starts process() workers: provisions the durable consumers (checking existing ones for
 * drift), then hands them to a {@link ProcessWorker}.
 */
import { TidemarkError, InvalidArgumentError } from "@tidemark/shared";
import type { TopicRuntime } from "../core/runtime.js";
import type { ProcessEvent, ProcessOptions, Worker } from "../core/types.js";
import { ackWaitMs, ensureConsumers } from "./consumer.js";
import { claimSubject, durableName, redriveSubject } from "../core/resources/broker-names.js";
import { resolveProcessOptions } from "./options.js";
import { assertNotPastHead } from "../core/read/past-head.js";
import { ProcessWorker } from "./worker.js";

/**
 * Starts a worker of `options.consumer`: creates the durable consumer on first use (checking
 * an existing one for drift), then runs `handler` for each event.
 *
 * @example
 * const worker = await startWorker(runtime, {
 *   consumer: "search-index", start: "earliest",
 *   delivery: { maxAttempts: 4, backoffMs: [1_000, 5_000, 30_000] },
 * }, async (event) => updateSearchIndex(event.data));
 * await worker.stop();
 */
export async function startWorker<T>(
  runtime: TopicRuntime,
  options: ProcessOptions,
  handler: (event: ProcessEvent<T>) => Promise<void> | void,
): Promise<Worker> {
  if (typeof handler !== "function") throw new InvalidArgumentError("process() needs a handler function");
  const resolved = resolveProcessOptions(options, (cursor) => runtime.cursorSequence(cursor));
  const filterSubject = runtime.filterFor(resolved.tenantId);
  const adoptLease = !resolved.leaseDeclared;
  try {
    const { nc, js, jsm, incarnation } = await runtime.ready();
    // The one past-head rule (core/read/past-head.ts): a durable consumer at a sequence the topic never
    // issued would wait there silently. One stream-info read, only for `start: { after }`.
    if (resolved.start.kind === "after") {
      const info = await runtime.streamInfo();
      assertNotPastHead(runtime.options.id, resolved.start.sequence, info?.state.last_seq ?? 0);
    }
    const durable = durableName(runtime.namespace, runtime.options.id, resolved.consumer);
    const label = `process(): consumer ${JSON.stringify(resolved.consumer)} of topic ${JSON.stringify(runtime.options.id)}`;
    const info = await ensureConsumers(
      jsm,
      { js, stream: runtime.deadLetterStreamName, subject: claimSubject(runtime.names, resolved.consumer) },
      [
        { stream: runtime.streamName, durable, filterSubject, start: resolved.start, declaration: resolved.declaration, adoptLease },
        {
          stream: runtime.deadLetterStreamName,
          durable,
          filterSubject: redriveSubject(runtime.names, resolved.consumer),
          start: { kind: "earliest" },
          declaration: resolved.declaration,
          adoptLease,
        },
      ],
      label,
    );
    const [events, redrive] = await Promise.all([
      js.consumers.get(runtime.streamName, durable),
      js.consumers.get(runtime.deadLetterStreamName, durable),
    ]);
    // Renew at the leases the broker enforces (adopted, or changed by an operator), the shorter.
    const ackWaits = await Promise.all([events.info(true), redrive.info(true)]);
    const leaseMs = Math.min(...ackWaits.map((i) => ackWaitMs(i.config)));
    return new ProcessWorker<T>({
      runtime,
      nc,
      js,
      incarnation,
      jsm,
      options: resolved,
      events,
      redrive,
      consumerEpoch: Date.parse(info.created).toString(36),
      leaseMs,
      handler,
    });
  } catch (err) {
    throw err instanceof TidemarkError ? err : runtime.mapError(err);
  }
}
