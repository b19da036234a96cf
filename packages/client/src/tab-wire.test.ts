import { expose, wrap } from "comlink";
import { afterAll, describe, expect, it, vi } from "vitest";
import { packer, unpacker, type Packet } from "./tab-wire.js";
import type { FeedItem, TabMessage } from "./types.js";

const event = (n: number): FeedItem => ({
  kind: "event",
  n,
  event: { eventId: `e${n}`, cursor: `s6t.x.${n}` as never, streamSequence: n, tenantId: "acme", data: { text: `note ${n}`, tags: ["a"] }, publishedAt: 1_700_000_000_000 + n },
});

// A real MessageChannel with comlink between the ends, as between the SharedWorker and a tab.
const channel = new MessageChannel();
const received: TabMessage[] = [];
const packets: Packet[] = [];
expose({ push: (packet: Packet) => (packets.push(packet), unpacker((m) => received.push(m))(packet)) }, channel.port1 as never);
const tab = wrap<{ push(packet: Packet): void }>(channel.port2 as never);
afterAll(() => {
  channel.port1.close();
  channel.port2.close();
});

describe("tab wire", () => {
  it("tab wire - a tab's messages of one task cross as one packet, in order, and arrive as sent", async () => {
    const send = packer((packet) => tab.push(packet));
    const items = [event(1), event(2)];
    const sent: TabMessage[] = [
      { type: "items", sub: "hub", items, effects: true },
      { type: "items", sub: "live", items: [event(3)], effects: false },
      { type: "caught_up", sub: "hub" },
      { type: "status", status: "live", tabs: 2 },
    ];
    for (const m of sent) send(m);
    await vi.waitFor(() => expect(received).toHaveLength(sent.length));
    expect(packets).toHaveLength(1);
    expect(received).toEqual(sent);
  });

  it("tab wire - items sent to several tabs in one flush are serialized once", async () => {
    const tabs = Array.from({ length: 5 }, () => packer(() => undefined));
    const items = [event(4), event(5)];
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      for (const [i, send] of tabs.entries()) send({ type: "items", sub: `s${i}`, items, effects: i === 0 });
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
  });
});
