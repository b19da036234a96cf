import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { context, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { jetstreamManager } from "@nats-io/jetstream";
import { runtimeOf } from "../../src/internal.js";
import { until, useProcessFixture } from "../process/fixture.js";

const fx = useProcessFixture();
const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  contextManager.enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});
afterAll(() => {
  trace.disable();
  context.disable();
});

describe("traces", () => {
  it("trace - one trace from publish to the process() handler, through the event's traceparent header", async () => {
    const topic = fx.topic<{ n: number }>({ id: "traced" });
    const app = trace.getTracer("test-app");
    const sent = await app.startActiveSpan("checkout", async (span) => {
      try {
        return await topic.publish({ data: { n: 1 } });
      } finally {
        span.end();
      }
    });
    const root = exporter.getFinishedSpans().find((s) => s.name === "checkout")!;
    const { traceId, spanId } = root.spanContext();
    // The stored event carries the publisher's span context in W3C form.
    const jsm = await jetstreamManager(fx.nc);
    const stored = await jsm.streams.getMessage(runtimeOf(topic).streamName, { seq: sent.streamSequence });
    expect(stored?.header.get("traceparent")).toBe(`00-${traceId}-${spanId}-01`);

    let inside: string | undefined;
    const worker = await topic.process({ consumer: "traced", start: "earliest", delivery: { maxAttempts: 2, backoffMs: [50] } }, (e) => {
      inside = trace.getActiveSpan()?.spanContext().traceId;
      if (e.attempt === 1) throw new Error("first attempt fails");
    });
    await until(() => exporter.getFinishedSpans().filter((s) => s.name === "process traced").length === 2, 10_000, "two handler spans");
    await worker.stop();
    const handlers = exporter.getFinishedSpans().filter((s) => s.name === "process traced");
    for (const s of handlers) {
      expect(s.kind).toBe(SpanKind.CONSUMER);
      expect(s.spanContext().traceId).toBe(traceId);
      expect(s.parentSpanContext?.spanId).toBe(spanId);
      expect(s.links.map((l) => l.context.spanId)).toEqual([spanId]);
      expect(s.attributes["messaging.message.id"]).toBe(sent.eventId);
    }
    expect(handlers.map((s) => s.attributes["tidemark.attempt"]).sort()).toEqual([1, 2]);
    expect(handlers.find((s) => s.attributes["tidemark.attempt"] === 1)!.status.code).toBe(SpanStatusCode.ERROR);
    // The handler runs inside its span: its own spans join the same trace.
    expect(inside).toBe(traceId);
  });

  it("trace - a publish outside any span adds no header; its handler span starts its own trace", async () => {
    const topic = fx.topic<number>({ id: "untraced" });
    const sent = await topic.publish({ data: 1 });
    const jsm = await jetstreamManager(fx.nc);
    const stored = await jsm.streams.getMessage(runtimeOf(topic).streamName, { seq: sent.streamSequence });
    expect(stored?.header?.get("traceparent") ?? "").toBe("");
    const worker = await topic.process({ consumer: "plain", start: "earliest", delivery: { maxAttempts: 1, backoffMs: [] } }, () => {});
    await until(() => exporter.getFinishedSpans().some((s) => s.name === "process untraced"), 10_000, "a handler span");
    await worker.stop();
    const span = exporter.getFinishedSpans().find((s) => s.name === "process untraced")!;
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.links).toEqual([]);
  });

  it("trace - a hub records one deliver span per event, child of the publish span, with its subscriber count", async () => {
    const topic = fx.topic<number>({ id: "hubbed" });
    const first = await topic.publish({ data: 0 });
    const stop = new AbortController();
    const seen: number[][] = [[], []];
    const readers = seen.map(async (got) => {
      for await (const e of topic.hub().subscribe({ after: first.cursor, signal: stop.signal })) got.push(e.data);
    });
    await topic.publish({ data: 1 }); // untraced: no span
    await until(() => seen.every((got) => got.includes(1)), 10_000, "both subscribers live");
    const sent = await trace.getTracer("test-app").startActiveSpan("order", async (span) => {
      try {
        return await topic.publish({ data: 2 });
      } finally {
        span.end();
      }
    });
    await until(() => seen.every((got) => got.includes(2)), 10_000, "both subscribers got the traced event");
    stop.abort();
    await Promise.allSettled(readers);
    const root = exporter.getFinishedSpans().find((s) => s.name === "order")!;
    const delivered = exporter.getFinishedSpans().filter((s) => s.name === "deliver hubbed");
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(delivered[0]!.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(delivered[0]!.links.map((l) => l.context.spanId)).toEqual([root.spanContext().spanId]);
    expect(delivered[0]!.attributes).toMatchObject({ "messaging.message.id": sent.eventId, "tidemark.hub.subscribers": 2 });
  });
});
