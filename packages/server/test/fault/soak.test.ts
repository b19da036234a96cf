/**
 * The bounded soak: publish, subscribe, reconnect churn and slow readers against a bridge
 * process, for TIDEMARK_SOAK_MS (default 1 minute; 600000 for the 10-minute run). The bridge's
 * RSS and open file descriptors are sampled from /proc and must be flat at the end. The two
 * samples compared (warmed up, end) are each taken right after a full collection in the bridge
 * (through its inspector): without it the resident size moves by up to ~100 MiB with how far V8
 * let its heap grow since its last collection (end - warm was -16 to +101 MiB over 11 runs of
 * the same code), which hides a leak of that size and fails a run that has none.
 */
import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync } from "../../src/index.js";
import { collectGarbage, inspectorUrl, startBridgeProcess, until, writeBridgeConfig, type BridgeProcess } from "@tidemark/testing";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";
import { Publisher, faultConfigSource, faultTopicOptions, startSubscribers } from "./fixture.js";
import { ResumingSubscriber, tally } from "./subscriber.js";

const SOAK_MS = Number(process.env.TIDEMARK_SOAK_MS ?? 60_000);
const dir = mkdtempSync(join(tmpdir(), "tidemark-soak-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** RSS (MiB) and open file descriptors of a process, from /proc. */
function sample(pid: number): { rssMiB: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(rssKiB / 102.4) / 10, fds: readdirSync(`/proc/${pid}/fd`).length };
}

describe("soak", () => {
  it(`soak - ${Math.round(SOAK_MS / 1000)} s of publishing, reconnect churn, joiners and slow readers: nothing lost or doubled, bridge memory and descriptors flat`, async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    // A small send-buffer bound so that slow readers do pause and catch up by replay.
    const config = writeBridgeConfig(dir, faultConfigSource(namespace, 1, "limits: { maxBufferedBytes: 65536, maxConnectionsPerPrincipal: 1000 },"));
    let bridge: BridgeProcess | undefined;
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    const steady: ResumingSubscriber[] = [];
    const joiners = new Set<ResumingSubscriber>();
    const ac = new AbortController();
    try {
      bridge = await startBridgeProcess(["--nats", nats.url, "--config", config], { NODE_OPTIONS: "--inspect=127.0.0.1:0" });
      const inspector = inspectorUrl(bridge.output);
      if (inspector === undefined) throw new Error(`the bridge printed no inspector URL: ${bridge.output.join("").slice(-500)}`);
      const topic = sync.topic<{ n: number; pad?: string }>(faultTopicOptions(1));
      const publisher = new Publisher(topic, { padBytes: 8 * 1024 });
      const tenants = Array.from({ length: 10 }, (_, i) => `t${i}`);
      await publisher.publish("warmup");
      steady.push(...(await startSubscribers(200, { urls: [bridge.wsUrl], topic: "fault.events", tenants })));
      // Slow readers read a hot tenant of 64 KiB events: a paused one overflows its socket
      // buffers, the bridge pauses it, and it catches up by replay.
      const hotPublisher = new Publisher(topic, { padBytes: 64 * 1024 });
      const slow = await startSubscribers(10, { urls: [bridge.wsUrl], topic: "fault.events", tenants: ["hot"] });
      steady.push(...slow);
      const expected = (s: ResumingSubscriber) => (s.options.tenantId === "hot" ? hotPublisher : publisher).expected(s.options.tenantId);

      const samples: { at: number; rssMiB: number; fds: number; connections: number }[] = [];
      const started = Date.now();
      const record = () => samples.push({ at: Date.now() - started, ...sample(bridge!.pid), connections: steady.length + joiners.size });
      record();
      const sampler = setInterval(record, Math.max(1_000, SOAK_MS / 30));
      // The warmed-up level: a quarter in, after a full collection.
      const warming = new Promise<{ at: number; rssMiB: number; fds: number }>((resolve, reject) =>
        setTimeout(() => {
          collectGarbage(inspector).then(() => resolve({ at: Date.now() - started, ...sample(bridge!.pid) }), reject);
        }, SOAK_MS / 4),
      );
      warming.catch(() => undefined); // awaited below; handled here too if the run fails first

      // Publishing: ~40 events/s with 8 KiB payloads.
      const publishing = Promise.all([
        publisher.run(tenants, Number.MAX_SAFE_INTEGER, { concurrency: 2, pauseMs: 50, signal: ac.signal }),
        hotPublisher.run(["hot"], Number.MAX_SAFE_INTEGER, { concurrency: 1, pauseMs: 100, signal: ac.signal }),
      ]);
      let drops = 0;
      let pauses = 0;
      let joined = 0;
      const churn = setInterval(() => {
        // Reconnect churn: 5 steady subscribers lose their socket and resume.
        for (let i = 0; i < 5; i++, drops++) steady[Math.floor(Math.random() * steady.length)]!.drop();
        // Slow readers: one of the hot tenant's readers stops reading for 8 s.
        slow[pauses++ % slow.length]!.pause(8_000);
        // Joiners come and go (live from the head).
        for (const j of [...joiners].slice(0, 5)) {
          j.close();
          joiners.delete(j);
        }
        for (let i = 0; i < 5; i++) {
          const tenantId = tenants[joined % tenants.length]!;
          const j = new ResumingSubscriber({ urls: [bridge!.wsUrl], token: `j${joined++}@${tenantId}`, topic: "fault.events", tenantId });
          joiners.add(j);
          j.start().catch(() => undefined);
        }
      }, 1_000);
      await new Promise((r) => setTimeout(r, SOAK_MS));
      clearInterval(churn);
      ac.abort();
      await publishing;
      for (const j of joiners) j.close();
      joiners.clear();

      const everyone = () => steady.every((s) => [...expected(s)].every((id) => s.seen.has(id)));
      await until("every steady subscriber has every acknowledged event of its tenant", everyone, 60_000, 250);
      // Let the bridge settle (closed joiners, idle hubs), then take the last sample.
      await new Promise((r) => setTimeout(r, 3_000));
      clearInterval(sampler);
      await collectGarbage(inspector);
      record();
      const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
      const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
      const counts = tally(steady, expected);
      const warm = await warming;
      const end = samples.at(-1)!;
      const peak = samples.reduce((m, s) => (s.rssMiB > m.rssMiB ? s : m));
      console.log(
        "FIGURES soak " +
          JSON.stringify({
            soakMs: SOAK_MS,
            published: publisher.published + hotPublisher.published,
            acknowledged: publisher.ackedCount + hotPublisher.ackedCount,
            hotEvents64KiB: hotPublisher.ackedCount,
            steadySubscribers: steady.length - slow.length,
            slowReaders: slow.length,
            ...counts,
            drops,
            pauses,
            joiners: joined,
            reconnects: steady.reduce((n, s) => n + s.reconnects, 0),
            backpressurePauses: metric("tidemark_bridge_backpressure_pauses_total"),
            catchUpReplays: metric("tidemark_bridge_replays_total"),
            eventFrames: metric("tidemark_bridge_events_delivered_total"),
            rssMiB: { start: samples[0]!.rssMiB, warm: warm.rssMiB, peak: peak.rssMiB, end: end.rssMiB },
            heapMiB: { used: Math.round(metric("nodejs_heap_size_used_bytes") / 2 ** 20), total: Math.round(metric("nodejs_heap_size_total_bytes") / 2 ** 20) },
            fds: { start: samples[0]!.fds, warm: warm.fds, end: end.fds },
            rssSeries: samples.map((x) => [Math.round(x.at / 1000), x.rssMiB]),
          }),
      );
      expect(counts).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
      expect(counts.delivered).toBeGreaterThan(steady.length * 10);
      expect(metric("tidemark_bridge_backpressure_pauses_total")).toBeGreaterThan(0);
      // Flat: the end is not above the warmed-up level by more than noise (GC timing), and the
      // descriptors are back to the steady connections' count.
      expect(end.rssMiB).toBeLessThan(Math.max(warm.rssMiB * 1.5, warm.rssMiB + 48));
      expect(end.fds).toBeLessThanOrEqual(warm.fds + 10);
      expect(end.fds).toBeLessThanOrEqual(samples[0]!.fds + 10);
    } finally {
      ac.abort();
      for (const s of [...steady, ...joiners]) s.close();
      await bridge?.kill();
      await sync.close();
    }
  }, SOAK_MS + 150_000);
});
