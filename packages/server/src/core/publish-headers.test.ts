import { describe, expect, it } from "vitest";
import { headers, MsgHdrsImpl } from "@nats-io/nats-core";
import { PublishHeaders, publishHeaderPrefix } from "./publish-headers.js";

const decoder = new TextDecoder();

describe("PublishHeaders", () => {
  it("encodes the same entries as nats.js's headers built with set()", () => {
    const ours = new PublishHeaders(publishHeaderPrefix("TMEV_x"), "TMEV_x", "acme:order-1 ");
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
    const h = new PublishHeaders(publishHeaderPrefix("S"), "S", "!id");
    h.set("X-Extra", "1");
    expect(MsgHdrsImpl.decode(h.encode()).toRecord()).toEqual({ "Nats-Expected-Stream": ["S"], "Nats-Msg-Id": ["!id"], "X-Extra": ["1"] });
    h.delete("X-Extra");
    expect(MsgHdrsImpl.decode(h.encode()).get("X-Extra")).toBe("");
  });
});
