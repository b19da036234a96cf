// An app with an OpenTelemetry SDK beside the INSTALLED @tidemark/server: registers a tracer
// and a meter provider, publishes to a real (embedded) nats-server and handles the event in a
// process() worker, then prints one JSON line with the spans and metrics Tidemark produced.
// The trace SDK is named by OTEL_TRACE_SDK: @opentelemetry/sdk-trace-base (2.x) or
// @opentelemetry/sdk-trace (3.x, whose provider is TracerProvider).
import { metrics, trace } from "@opentelemetry/api";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { createSync } from "@tidemark/server";

const sdk = await import(process.env.OTEL_TRACE_SDK);
const spans = new sdk.InMemorySpanExporter();
// 2.x: BasicTracerProvider, SimpleSpanProcessor(exporter); 3.x: TracerProvider, SimpleSpanProcessor({ exporter }).
const processor = sdk.BasicTracerProvider ? new sdk.SimpleSpanProcessor(spans) : new sdk.SimpleSpanProcessor({ exporter: spans });
const tracers = new (sdk.BasicTracerProvider ?? sdk.TracerProvider)({ spanProcessors: [processor] });
trace.setGlobalTracerProvider(tracers);
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const meters = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })] });
metrics.setGlobalMeterProvider(meters);

const sync = createSync({ embedded: { dataDir: process.env.TIDEMARK_DATA_DIR, websocket: false } });
const topic = sync.topic({ id: "otel.events" });
let handled;
const done = new Promise((resolve) => (handled = resolve));
const worker = await topic.process({ consumer: "otel-check", start: "earliest", delivery: { maxAttempts: 3, backoffMs: [100] } }, (event) => {
  handled(event.eventId);
});
await topic.publish({ data: { n: 1 } });
await done;
await worker.stop(); // the handler's span has ended once stop() resolves
await Promise.all([tracers.forceFlush(), meters.forceFlush()]); // 3.x exports spans asynchronously
await sync.close();

const metricNames = exporter.getMetrics().flatMap((rm) => rm.scopeMetrics.filter((s) => s.scope.name === "@tidemark/server").flatMap((s) => s.metrics.map((m) => m.descriptor.name)));
const spanNames = spans.getFinishedSpans().filter((s) => (s.instrumentationScope ?? s.instrumentationLibrary)?.name === "@tidemark/server").map((s) => s.name);
console.log(JSON.stringify({ node: process.version, spans: spanNames, metrics: metricNames }));
