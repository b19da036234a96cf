/**
 * Hostile readers that resume from an old cursor and then stop reading (their pings keep the
 * socket open) must not hold the bridge's memory or the broker's consumers: a paused
 * subscription holds no replay consumer and no prefetched events while it waits, and resumes
 * from its cursor when its socket drains (docs/bridge.md, "Backpressure and memory").
 *
 * The bridge runs in its own process (`tidemark serve`), so that the clients' buffers do not
 * count; its RSS is read from /proc right after a full collection through its inspector. The
 * clients are raw TCP sockets speaking just enough WebSocket to say hello, subscribe and ping.
 */
import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect as tcp, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSync } from "../../src/index.js";
import { collectGarbage, inspectorUrl, startBridgeProcess, startTestNats, uniqueNamespace, until, writeBridgeConfig } from "@tidemark/testing";
import { consumersOf } from "../hub/fixture.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-stall-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MiB = 1024 ** 2;
const SOCKETS = 20; // the default maxConnectionsPerPrincipal: one principal's worst case
const EVENTS = 240;
const PAD = 120 * 1024; // large events: 240 of them are ~29 MiB, more than a stalled socket takes
const TOPIC = { id: "stall.events", maxPayloadBytes: 256 * 1024, retention: { maxBytes: 96 * MiB }, deadLetterRetention: { maxBytes: MiB } };
/** The bridge's default send bound (`limits.maxBufferedBytes`). */
const SEND_BOUND = MiB;

function rssMiB(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return Math.round(kib / 102.4) / 10;
}

/** A masked client TEXT frame. */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([head, mask, body]);
}

/** Reads the server's (unmasked) frames out of a byte stream. */
class FrameReader {
  #buffer = Buffer.alloc(0);
  readonly texts: string[] = [];
  push(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const b = this.#buffer;
      if (b.length < 2) return;
      let length = b[1]! & 0x7f;
      let at = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        length = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      if (b.length < at + length) return;
      if ((b[0]! & 0x0f) === 1) this.texts.push(b.subarray(at, at + length).toString());
      this.#buffer = b.subarray(at + length);
    }
  }
}

/**
 * A socket that says hello, subscribes in hub mode after `cursor`, reads until its first event
 * frame has begun to arrive, then stops reading; it sends a ping every second, so the bridge sees
 * a live client.
 */
async function stalledSocket(port: number, token: string, cursor: string): Promise<{ socket: Socket; reader: FrameReader; resume(): void; close(): void }> {
  const socket = tcp({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  const reader = new FrameReader();
  let upgraded = false;
  let head = Buffer.alloc(0);
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (upgraded) return reader.push(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    upgraded = true;
    reader.push(head.subarray(end + 4));
  };
  socket.on("data", onData);
  socket.write(frame(JSON.stringify({ type: "hello", v: 1, token })));
  socket.write(frame(JSON.stringify({ type: "subscribe", id: "s", topic: TOPIC.id, tenantId: "t", mode: "hub", cursor })));
  await until("the replay's first event is arriving", () => received > 64 * 1024, 20_000, 10);
  socket.pause();
  const pinger = setInterval(() => socket.write(frame('{"type":"ping"}')), 1_000);
  return {
    socket,
    reader,
    resume: () => socket.resume(),
    close: () => {
      clearInterval(pinger);
      socket.destroy();
    },
  };
}

describe("hostile: stalled replays", () => {
  it(`hostile - ${SOCKETS} sockets of one principal that resume from an old cursor and stop reading hold no replay consumer and at most the send bound plus a frame each`, async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const config = writeBridgeConfig(
      dir,
      `export default {
  namespace: ${JSON.stringify(namespace)},
  topics: [{ ...${JSON.stringify(TOPIC)}, authorize: () => true }],
  authenticate: (token) => ({ id: token }),
  logLevel: "warn",
};
`,
    );
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    const bridge = await startBridgeProcess(["--nats", nats.url, "--config", config], { NODE_OPTIONS: "--inspect=127.0.0.1:0" });
    const sockets: Awaited<ReturnType<typeof stalledSocket>>[] = [];
    try {
      const inspector = inspectorUrl(bridge.output);
      if (inspector === undefined) throw new Error(`the bridge printed no inspector URL: ${bridge.output.join("").slice(-500)}`);
      const topic = sync.topic<{ n: number; pad: string }>(TOPIC);
      const pad = "x".repeat(PAD);
      const cursors: string[] = [];
      for (let n = 0; n < EVENTS; n += 16) {
        const receipts = await Promise.all(Array.from({ length: Math.min(16, EVENTS - n) }, (_, i) => topic.publish({ data: { n: n + i, pad }, tenantId: "t" })));
        cursors.push(...receipts.map((r) => r.cursor));
      }
      const metrics = async () => await (await fetch(`${bridge.url}/metrics`)).text();
      const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);

      const port = Number(new URL(bridge.url).port);
      // Warm up (code, the frame cache, the hub's window) with a reader that reads it all.
      const warm = await stalledSocket(port, "warmup", cursors[0]!);
      warm.resume();
      await until("the warm-up reader has every event", () => warm.reader.texts.filter((t) => t.startsWith('{"type":"event"')).length >= EVENTS - 1, 60_000, 100);
      warm.close();
      await until("the warm-up connection is gone", async () => gauge(await metrics(), "tidemark_bridge_connections") === 0, 10_000, 100);
      await collectGarbage(inspector);
      const before = rssMiB(bridge.pid);
      const held = (text: string) => (gauge(text, "nodejs_heap_size_used_bytes") + gauge(text, "nodejs_external_memory_bytes")) / MiB;
      const textBefore = await metrics();
      const heldBefore = held(textBefore);
      // Each resumes from the first event: a replay of ~29 MiB that it stops reading.
      for (let i = 0; i < SOCKETS; i++) sockets.push(await stalledSocket(port, "mallory", cursors[0]!));
      // Settled: all paused, and no pause or replay for two seconds (the kernel's buffers of a
      // socket that does not read still grow for a while, and each time the bridge's buffer
      // drains below half the bound the subscription reads on and pauses again). Also long
      // enough for a held replay consumer to fill its flow-control window.
      let last = "";
      let stable = 0;
      await until(
        "every stalled connection is paused and stays so",
        async () => {
          const text = await metrics();
          const now = ["tidemark_bridge_backpressure_pauses_total", "tidemark_bridge_replays_total"].map((n) => gauge(text, n)).join();
          stable = now === last && gauge(text, "tidemark_bridge_paused_connections") === SOCKETS ? stable + 1 : 0;
          last = now;
          return stable >= 4;
        },
        60_000,
        500,
      );
      const consumers = await consumersOf(nats, namespace);
      await collectGarbage(inspector);
      const stalled = rssMiB(bridge.pid);
      const text = await metrics();
      const figures = {
        sockets: SOCKETS,
        eventBytes: PAD,
        consumers,
        pausesAndReplays: last,
        rssMiB: { before, stalled, perSocket: Math.round(((stalled - before) / SOCKETS) * 10) / 10 },
        heapPlusExternalMiB: { before: Math.round(heldBefore), stalled: Math.round(held(text)) },
        heapUsedMiB: Math.round(gauge(text, "nodejs_heap_size_used_bytes") / MiB),
        externalMiB: Math.round(gauge(text, "nodejs_external_memory_bytes") / MiB),
      };
      console.log("FIGURES stalled-replay " + JSON.stringify(figures));
      // Before: one replay consumer per stalled socket (21 with the feed), each holding what it
      // prefetched (~12.7 MiB per socket with 120 KB events).
      expect(consumers).toBeLessThanOrEqual(1);
      // The send bound plus one frame per paused subscriber (the frames a socket's buffer
      // holds are Buffers outside the heap), and room for the process's noise; RSS also keeps
      // pages the allocator got back but did not return.
      const bound = (SOCKETS * (SEND_BOUND + 2 * PAD)) / MiB;
      expect(held(text) - heldBefore).toBeLessThan(bound + 16);
      expect(stalled - before).toBeLessThan(bound + 64);

      // Nothing is lost: a stalled socket that reads again gets every event after its cursor,
      // in order, once (by replay from where it paused).
      const one = sockets[0]!;
      one.resume();
      const seqs = () =>
        one.reader.texts
          .map((t) => JSON.parse(t) as { type: string; event?: { streamSequence: number } })
          .filter((f) => f.type === "event")
          .map((f) => f.event!.streamSequence);
      await until("the resumed socket has every event", () => seqs().length >= EVENTS - 1, 60_000, 100);
      const first = topic.cursorSequence(cursors[0]!);
      expect(seqs()).toEqual(Array.from({ length: EVENTS - 1 }, (_, i) => first + 1 + i));
    } finally {
      for (const s of sockets) s.close();
      await bridge.kill();
      await sync.close();
    }
  }, 150_000); // warm-up and settling each wait up to 60 s: the test must outlast them to report which
});
