/**
 * What a publish's headers promise on the broker: the message id the dedupe window keys on, and
 * the expected stream that keeps an event out of any other stream holding the topic's subjects.
 */
import { describe, expect, it } from "vitest";
import { runtimeOf } from "../../src/internal.js";
import { useCoreFixture } from "./fixture.js";

const fx = useCoreFixture();

describe("publish headers", () => {
  it("publish - the stored event carries its tenant-scoped message id and names its stream", async () => {
    const topic = fx.sync().topic<number>({ id: "hdr.events" });
    const receipt = await topic.publish({ data: 1, tenantId: "acme", idempotencyKey: "order-1" });
    const stored = await fx.jsm.streams.getMessage(runtimeOf(topic).streamName, { seq: receipt.streamSequence });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("acme:order-1");
    const generated = await topic.publish({ data: 2 });
    const second = await fx.jsm.streams.getMessage(runtimeOf(topic).streamName, { seq: generated.streamSequence });
    expect(second?.header.get("Nats-Msg-Id")).toMatch(/^!/);
  });

  it("publish - a stream that took over the topic's subjects is refused; nothing is stored in it", async () => {
    const topic = fx.sync().topic<number>({ id: "hdr.takeover" });
    await topic.publish({ data: 1 });
    const rt = runtimeOf(topic);
    await fx.jsm.streams.delete(rt.streamName);
    await fx.jsm.streams.add({ name: "IMPOSTOR_HDR", subjects: [rt.filterFor(undefined)] });
    try {
      await expect(topic.publish({ data: 2 })).rejects.toThrow();
      expect((await fx.jsm.streams.info("IMPOSTOR_HDR")).state.messages).toBe(0);
    } finally {
      await fx.jsm.streams.delete("IMPOSTOR_HDR");
    }
  });
});
