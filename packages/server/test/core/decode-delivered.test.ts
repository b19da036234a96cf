/**
 * The replay's consumer pass decodes delivered messages itself (decode-delivered.ts: a cursor
 * prefix per pass, the delivery info read once): its events must be the
 * ones published, with the cursors publish returned, byte for byte as the topic's own decode.
 */
import { describe, expect, it } from "vitest";
import { headers } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { decodeDelivered, runtimeOf } from "../../src/internal.js";
import { collect, delivered, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
// More than a direct read takes (direct-read.ts, 64): the replays below go through a consumer.
const COUNT = 300;
const TEXTS = ["plain", "é ü ß", "€ 中文 😀", "\ufeffleading BOM inside the string", "a\u0000b", "\u2028\u2029", ""];

interface Item {
  n: number;
  text: string;
}

describe("decode delivered", () => {
  it("decode-delivered - a replay yields what was published, with the cursors publish returned", async () => {
    const topic = fx.sync().topic<Item>({ id: "decode.events" });
    const data = Array.from({ length: COUNT }, (_, n) => ({ n, text: TEXTS[n % TEXTS.length]! }));
    const receipts = await Promise.all(data.map((d, n) => topic.publish({ data: d, tenantId: n % 3 === 0 ? `t-${n % 2}` : undefined })));
    receipts.sort((a, b) => a.streamSequence - b.streamSequence);
    const bySeq = new Map(receipts.map((r, i) => [r.streamSequence, i]));

    const events = await collect(topic.replay());
    expect(events).toHaveLength(COUNT);
    expect(events.map((e) => e.cursor)).toEqual(receipts.map((r) => r.cursor));
    expect(events.map((e) => e.eventId)).toEqual(receipts.map((r) => r.eventId));
    expect(events.map((e) => e.streamSequence)).toEqual(receipts.map((r) => r.streamSequence));
    expect(new Set(events.map((e) => e.data.n)).size).toBe(COUNT);
    for (const e of events) {
      expect(e.data).toEqual(data[e.data.n]);
      expect(e.tenantId).toBe(e.data.n % 3 === 0 ? `t-${e.data.n % 2}` : undefined);
      expect(bySeq.has(e.streamSequence)).toBe(true);
    }
    // A yielded cursor is one replay(after) takes: the rest follows it (still a consumer's read).
    const rest = await collect(topic.replay({ after: events[99]!.cursor }));
    expect(rest.map((e) => e.cursor)).toEqual(receipts.slice(100).map((r) => r.cursor));
  });

  it("decode-delivered - equals the topic's decode: a payload with a leading BOM, non-ASCII, a traceparent header", async () => {
    const topic = fx.sync().topic<string>({ id: "decode.raw" });
    const rt = runtimeOf(topic);
    const first = await topic.publish({ data: "ü€😀" });
    const js = jetstream(fx.nc);
    const encode = (s: string) => new TextEncoder().encode(s);
    // Stored by another writer: a UTF-8 BOM before the envelope, as TextDecoder drops it.
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...encode(JSON.stringify({ v: 1, ts: 7, d: "bom" }))]);
    await js.publish(rt.subjectFor(undefined), bom);
    const traced = headers();
    traced.set("traceparent", TRACEPARENT);
    await js.publish(rt.subjectFor(undefined), encode(JSON.stringify({ v: 1, ts: 8, t: "x", d: "traced ß" })), { headers: traced });

    const messages = await delivered(fx.nc, rt.streamName, 3);
    const h = await rt.ready();
    const decode = decodeDelivered<string>({ namespace: rt.namespace, topic: rt.options.id, incarnation: h.incarnation });
    const events = messages.map((m) => decode(m, m.info.streamSequence));
    expect(events).toEqual(messages.map((m) => rt.toEvent<string>(m)));
    expect(events.map((e) => e.data)).toEqual(["ü€😀", "bom", "traced ß"]);
    expect(events[0]!.cursor).toBe(first.cursor);
    expect(events.map((e) => e.cursor)).toEqual(events.map((e) => topic.cursorAt(e.streamSequence)));
    expect(events[2]).toMatchObject({ tenantId: "x", publishedAt: 8 });
    expect(messages[2]!.headers?.get("traceparent")).toBe(TRACEPARENT);
    // The topic's replay (a direct read for three events) and the decode agree too.
    expect(await collect(topic.replay())).toEqual(events);
  });
});
