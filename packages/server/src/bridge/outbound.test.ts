import { describe, expect, it } from "vitest";
import { CloseCode, ErrorCode } from "@tidemark/shared";
import { Outbound, type OutboundHost } from "./outbound.js";
import { DEFAULT_LIMITS } from "./options.js";
import { BridgeMetrics } from "./metrics.js";
import { BackpressurePoller } from "./backpressure.js";
import type { BridgeSocket, FrameText } from "./socket.js";

const MAX = 1000;

/** A socket whose send buffer the test sets; it records what was sent. */
function socket(): BridgeSocket & { sent: string[]; bufferedAmount: number } {
  return {
    sent: [],
    bufferedAmount: 0,
    send(text: string) {
      this.sent.push(text);
    },
    sendFrame(frame: FrameText) {
      this.sent.push(frame.text);
    },
    close() {},
  };
}

/** The connection side of an Outbound: records its closes. */
function host(): OutboundHost & { closed: boolean; closes: [number, string][] } {
  return {
    id: "c-test",
    closed: false,
    closes: [],
    close(code: number, reason: string) {
      this.closes.push([code, reason]);
      this.closed = true;
    },
  };
}

function outbound() {
  const context = { options: { limits: { ...DEFAULT_LIMITS, maxBufferedBytes: MAX } }, metrics: new BridgeMetrics(), backpressure: new BackpressurePoller(), log: () => {} };
  const s = socket();
  const h = host();
  return { out: new Outbound(context, s, h), socket: s, host: h, context };
}

describe("outbound - the sending half of a connection, owned by it", () => {
  it("outbound - a reply goes out; past four times maxBufferedBytes the connection is closed as not reading", () => {
    const { out, socket, host } = outbound();
    out.send("a");
    socket.bufferedAmount = 4 * MAX + 1;
    out.send("b");
    expect(socket.sent).toEqual(["a"]);
    expect(host.closes).toEqual([[CloseCode.Timeout, "not reading"]]);
    out.send("c");
    expect(socket.sent).toEqual(["a"]);
  });

  it("outbound - over the bound events wait: canSend says false until the buffer drained below half, then writable resolves", async () => {
    const { out, socket, context } = outbound();
    try {
      expect(out.canSend()).toBe(true);
      socket.bufferedAmount = MAX + 1;
      expect(out.canSend()).toBe(false);
      expect(context.metrics.pausedConnections).toBe(1);
      socket.bufferedAmount = MAX / 2 + 1;
      expect(out.checkDrained()).toBe(false);
      socket.bufferedAmount = MAX / 2;
      expect(out.checkDrained()).toBe(true);
      await out.writable();
      expect(out.canSend()).toBe(true);
      expect(context.metrics.pausedConnections).toBe(0);
      expect(context.metrics.backpressurePauses).toBe(1);
    } finally {
      context.backpressure.stop();
    }
  });

  it("outbound - refuse sends the error frame, then closes the connection through its host", () => {
    const { out, socket, host, context } = outbound();
    out.refuse(ErrorCode.Unauthorized, "no", CloseCode.Unauthorized);
    expect(socket.sent.map((t) => JSON.parse(t))).toEqual([{ type: "error", code: ErrorCode.Unauthorized, message: "no" }]);
    expect(host.closes).toEqual([[CloseCode.Unauthorized, "no"]]);
    expect(context.metrics.errors[ErrorCode.Unauthorized]).toBe(1);
  });
});
