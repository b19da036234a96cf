/**
 * CPU cost of sizing an event for the hub windows (the figures in docs/reliability.md): the
 * heap estimate (hub/size-estimate.ts, once per event, plus the memo's lookup for the second
 * holder) against the JSON-length sizeOf it replaced (one JSON.stringify per holder: the feed
 * backlog and the ring). Not part of the suite:
 *   node --conditions=@tidemark/source --import tsx packages/server/test/hostile/size-estimate-cost.ts
 */
import type { TidemarkEvent } from "@tidemark/shared";
import { eventSizer, sizeOnce } from "../../src/internal.js";

const payloads: Record<string, () => unknown> = {
  "record (110 B)": () => ({ itemId: "item-123456", kind: "stock", count: 17, at: "2026-12-02T06:30:00Z", by: { id: "u-42", name: "Ada" } }),
  "string (4 KB)": () => "x".repeat(4_000),
  "40 records (4 KB)": () => Array.from({ length: 40 }, (_, i) => ({ id: `item-${i}`, name: "widget", price: i + 0.25, tags: ["a", "b"] })),
  "empty objects (4 KB)": () => Array.from({ length: 1_333 }, () => ({})),
  "640 records (42 KB)": () => Array.from({ length: 640 }, (_, i) => ({ id: `item-${i}`, name: "widget", price: i + 0.25, tags: ["a", "b"] })),
};

const oldSizeOf = (event: TidemarkEvent) => (JSON.stringify(event.data)?.length ?? 0) + 200;

function perEvent(events: TidemarkEvent[], size: (e: TidemarkEvent) => number): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (const e of events) sink += size(e);
  const ns = Number(process.hrtime.bigint() - started) / events.length;
  if (sink < 0) console.log(sink);
  return ns;
}

const rows: Record<string, { jsonLengthTwiceNs: number; estimateOnceNs: number; estimateBytes: number; jsonBytes: number }> = {};
for (const [name, make] of Object.entries(payloads)) {
  const n = Math.max(200, Math.round(2_000_000 / JSON.stringify(make()).length));
  const fresh = () => Array.from({ length: n }, (_, i) => ({ eventId: `e-${i}`, cursor: `s6t.c.${i}`, streamSequence: i, data: JSON.parse(JSON.stringify(make())) as unknown, publishedAt: Date.now() }) as TidemarkEvent);
  // Warm both paths, then measure on events neither has seen.
  perEvent(fresh(), oldSizeOf);
  perEvent(fresh(), sizeOnce(eventSizer()));
  // The least of 5 runs: the machine is shared, and noise only adds.
  let jsonLengthTwiceNs = Infinity;
  let estimateOnceNs = Infinity;
  let b: TidemarkEvent[] = [];
  let memo = sizeOnce(eventSizer());
  for (let run = 0; run < 5; run++) {
    const a = fresh();
    jsonLengthTwiceNs = Math.min(jsonLengthTwiceNs, perEvent(a, oldSizeOf) + perEvent(a, oldSizeOf));
    b = fresh();
    memo = sizeOnce(eventSizer());
    estimateOnceNs = Math.min(estimateOnceNs, perEvent(b, memo) + perEvent(b, memo));
  }
  rows[name] = { jsonLengthTwiceNs: Math.round(jsonLengthTwiceNs), estimateOnceNs: Math.round(estimateOnceNs), estimateBytes: memo(b[1]!), jsonBytes: JSON.stringify(b[0]!.data).length };
}
console.table(rows);
