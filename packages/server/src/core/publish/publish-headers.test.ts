import { describe, expect, it } from "vitest";
import { headers, MsgHdrsImpl } from "@nats-io/nats-core";
import { PublishHeaders, publishHeaderPrefix } from "./publish-headers.js";

const decoder = new TextDecoder();

describe("PublishHeaders", () => {
  it("encodes the same entries as nats.js's headers built with set()", () => {
    const ours = new PublishHeaders(publishHeaderPrefix("TMEV_x"), "acme:order-1 ");
    const theirs = headers();
    theirs.set("Nats-Msg-Id", "acme:order-1 ");
    theirs.set("Nats-Expected-Stream", "TMEV_x");
    const decoded = MsgHdrsImpl.decode(ours.encode());
    expect(decoded.toRecord()).toEqual((theirs as MsgHdrsImpl).toRecord());
    expect(decoder.decode(ours.encode())).toBe("NATS/1.0\r\nNats-Expected-Stream: TMEV_x\r\nNats-Msg-Id: acme:order-1\r\n\r\n");
    expect(ours.get("Nats-Msg-Id")).toBe("acme:order-1");
    expect(ours.has("Nats-Expected-Stream")).toBe(true);
  });

  it("a change after construction is encoded (the cached block is dropped)", () => {
    const h = new PublishHeaders(publishHeaderPrefix("S"), "!id");
    h.set("X-Extra", "1");
    expect(MsgHdrsImpl.decode(h.encode()).toRecord()).toEqual({ "Nats-Expected-Stream": ["S"], "Nats-Msg-Id": ["!id"], "X-Extra": ["1"] });
    h.delete("X-Extra");
    expect(MsgHdrsImpl.decode(h.encode()).get("X-Extra")).toBe("");
  });

  it("an id that is not ASCII is encoded as UTF-8, like nats.js", () => {
    const ours = new PublishHeaders(publishHeaderPrefix("TMEV_x"), "tenant:clé-🙂");
    const theirs = headers();
    theirs.set("Nats-Expected-Stream", "TMEV_x");
    theirs.set("Nats-Msg-Id", "tenant:clé-🙂");
    expect(ours.encode()).toEqual((theirs as MsgHdrsImpl).encode());
  });

  it("reads and iteration see both entries; encode() after a read gives the same bytes", () => {
    const h = new PublishHeaders(publishHeaderPrefix("S"), "!abc");
    const before = h.encode();
    expect([...h]).toEqual([["Nats-Expected-Stream", ["S"]], ["Nats-Msg-Id", ["!abc"]]]);
    expect(h.keys()).toEqual(["Nats-Expected-Stream", "Nats-Msg-Id"]);
    expect(h.values("nats-msg-id", "insensitive")).toEqual(["!abc"]);
    expect(h.hasError).toBe(false);
    expect(h.encode()).toEqual(before);
  });
});
