/**
 * Hostile payload shapes against the hubs' byte bounds, measured in a bridge process of its own
 * (heap-bridge.ts, so the test's clients do not count). `JSON.parse` makes `[{},{},…]` 20 times
 * its JSON length in heap; the rings and the feed backlog must bound what they really hold, not
 * the JSON characters. Each shape has its own topic and tenants; after its events reached every
 * subscriber, the bridge's heap (after a full collection) may have grown by at most the rings
 * of its hubs, the topic's backlog and the frame cache (4 MiB), plus a margin.
 *
 * The figures of docs/reliability.md at a larger scale: TIDEMARK_HEAP_TENANTS (hubs per shape,
 * default 8), TIDEMARK_HEAP_EVENTS (per tenant, default 64), TIDEMARK_HEAP_SHAPES (a comma list
 * of SHAPES keys), and the hub bounds of heap-bridge.ts.
 */
import { describe, it, expect, afterAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createSync } from "../../src/index.js";
import { heapUsedAfterGc, inspectorUrl, startTestNats, uniqueNamespace, until } from "@tidemark/testing";
import { ResumingSubscriber } from "../fault/subscriber.js";
import { HUB_LIMITS, PAYLOAD_CHARS, SHAPES, topicOptions } from "./heap-bridge.js";

const MiB = 1024 * 1024;
const TENANTS = Number(process.env.TIDEMARK_HEAP_TENANTS ?? 8);
const EVENTS_PER_TENANT = Number(process.env.TIDEMARK_HEAP_EVENTS ?? 64);
const shapes = Object.entries(SHAPES).filter(([name]) => process.env.TIDEMARK_HEAP_SHAPES?.split(",").includes(name) ?? true);
const FRAME_CACHE = 4 * MiB;
/** Subscription state, pools and the like that move by a few hundred KiB between samples. */
const MARGIN = 1.5 * MiB;
const BOUND = TENANTS * HUB_LIMITS.ringBytes + HUB_LIMITS.feedBacklogBytes + FRAME_CACHE + MARGIN;

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});

/** Starts heap-bridge.ts with an inspector; resolves with its WebSocket URL and inspector URL. */
async function startHeapBridge(natsUrl: string, namespace: string): Promise<{ wsUrl: string; inspector: string }> {
  const entry = fileURLToPath(new URL("./heap-bridge.ts", import.meta.url));
  const child = spawn(process.execPath, ["--inspect=127.0.0.1:0", "--conditions=@tidemark/source", "--import", "tsx", entry, natsUrl, namespace], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output: string[] = [];
  child.stderr!.on("data", (d) => output.push(String(d)));
  child.stdout!.on("data", (d) => output.push(String(d)));
  const port = await until("the heap bridge prints its port", () => /port (\d+)/.exec(output.join(""))?.[1], 45_000);
  const inspector = inspectorUrl(output);
  if (!inspector) throw new Error(`no inspector URL: ${output.join("").slice(-500)}`);
  return { wsUrl: `ws://127.0.0.1:${port}/ws`, inspector };
}

describe("hostile payload shapes", () => {
  it("hostile - arrays of empty objects, deep nesting, many small keys, numbers and short strings hold no more heap per hub than its byte bounds", async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    const subscribers: ResumingSubscriber[] = [];
    try {
      const topics = Object.fromEntries(Object.keys(SHAPES).map((shape) => [shape, sync.topic(topicOptions(shape))]));
      // Provision every topic before the bridge declares it.
      for (const topic of Object.values(topics)) await topic.head();
      const bridge = await startHeapBridge(nats.url, namespace);
      const tenants = Array.from({ length: TENANTS }, (_, i) => `t${i}`);
      const byShape = new Map<string, ResumingSubscriber[]>();
      for (const [shape] of shapes) {
        const group = tenants.map((tenantId) => new ResumingSubscriber({ urls: [bridge.wsUrl], token: `${shape}-${tenantId}@${tenantId}`, topic: topicOptions(shape).id, tenantId }));
        await Promise.all(group.map((s) => s.start()));
        byShape.set(shape, group);
        subscribers.push(...group);
      }
      let previous = await heapUsedAfterGc(bridge.inspector);
      const figures: Record<string, { heapMiB: number; jsonMiB: number }> = {};
      let n = 0;
      for (const [shape, make] of shapes) {
        const topic = topics[shape]!;
        let next = 0;
        const total = TENANTS * EVENTS_PER_TENANT;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < total) {
              const i = next++;
              await topic.publish({ data: make(n++), tenantId: tenants[i % TENANTS]! });
            }
          }),
        );
        const group = byShape.get(shape)!;
        await until(`every ${shape} subscriber has its ${EVENTS_PER_TENANT} events`, () => group.every((s) => s.delivered === EVENTS_PER_TENANT), 120_000, 100);
        const used = await heapUsedAfterGc(bridge.inspector);
        figures[shape] = { heapMiB: Math.round(((used - previous) / MiB) * 10) / 10, jsonMiB: Math.round(((total * PAYLOAD_CHARS) / MiB) * 10) / 10 };
        previous = used;
      }
      console.log(`FIGURES heap per shape (${TENANTS} hubs each, bound ${(BOUND / MiB).toFixed(1)} MiB) ${JSON.stringify(figures)}`);
      for (const s of subscribers) expect(s.doubled).toBe(0);
      const over = Object.entries(figures).filter(([, f]) => f.heapMiB * MiB > BOUND);
      expect(over, `heap grown past ${(BOUND / MiB).toFixed(1)} MiB`).toEqual([]);
    } finally {
      for (const s of subscribers) s.close();
      await sync.close();
    }
  }, 900_000);
});
