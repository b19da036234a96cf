/**
 * The per-event header probe of a replay: a delivered event's header block is decoded only when
 * it may carry a trace context, and an event that carries one still gets it.
 */
import { describe, expect, it } from "vitest";
import { headers, type MsgHdrs } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { traceableHeaders, runtimeOf } from "../../src/internal.js";
import { delivered, useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("trace probe", () => {
  it("trace - a delivered event without traceparent is not decoded; one with it keeps its headers", async () => {
    const topic = fx.sync().topic<number>({ id: "probe.events" });
    await topic.publish({ data: 1 }); // no active span: Nats-Msg-Id and Nats-Expected-Stream only
    const rt = runtimeOf(topic);
    const traced: MsgHdrs = headers();
    traced.set("traceparent", TRACEPARENT);
    await jetstream(fx.nc).publish(rt.subjectFor(undefined), new TextEncoder().encode(JSON.stringify({ v: 1, ts: 1, d: 2 })), { headers: traced });

    const [plain, withTrace] = await delivered(fx.nc, rt.streamName, 2);
    // The plain event has a header block (its message id) that the probe leaves alone.
    expect(traceableHeaders(plain!)).toBeUndefined();
    expect(plain!.headers?.get("Nats-Msg-Id")).toMatch(/^!/);
    expect(traceableHeaders(withTrace!)?.get("traceparent")).toBe(TRACEPARENT);
    // A replay turns both into events; the decoded event data is the same either way.
    const events = [];
    for await (const e of topic.replay()) events.push(e.data);
    expect(events).toEqual([1, 2]);
  });

  it("trace - a message whose internals are not nats.js 3's falls back to its headers", () => {
    const h = headers();
    h.set("Nats-Msg-Id", "x");
    expect(traceableHeaders({ headers: h })).toBe(h);
    expect(traceableHeaders({ headers: undefined })).toBeUndefined();
  });

  it("trace - only a header line that starts with the traceparent key is decoded, on any line", () => {
    // nats.js 3's message internals (what traceableHeaders inspects): the raw bytes, the block's length.
    const shaped = (block: string, body = "{}") => {
      const bytes = new TextEncoder().encode(block + body);
      const h = headers();
      return { msg: { _rdata: bytes, _msg: { hdr: block.length } }, headers: h };
    };
    const inValue = shaped("NATS/1.0\r\nNats-Msg-Id: traceparent-1\r\nX-Note: a traceparent: 00-x\r\n\r\n");
    expect(traceableHeaders(inValue)).toBeUndefined();
    const otherKey = shaped("NATS/1.0\r\nx-traceparent: 00-x\r\n\r\n");
    expect(traceableHeaders(otherKey)).toBeUndefined();
    // In the body only: not a header.
    expect(traceableHeaders(shaped("NATS/1.0\r\nNats-Msg-Id: a\r\n\r\n", `{"traceparent":1}`))).toBeUndefined();
    const last = shaped(`NATS/1.0\r\nNats-Msg-Id: a\r\nNats-Expected-Stream: S\r\ntraceparent: ${TRACEPARENT}\r\n\r\n`);
    expect(traceableHeaders(last)).toBe(last.headers);
    const first = shaped(`NATS/1.0\r\ntraceparent: ${TRACEPARENT}\r\nNats-Msg-Id: a\r\n\r\n`);
    expect(traceableHeaders(first)).toBe(first.headers);
  });
});
