import { describe, expect, it } from "vitest";
import { BridgeMetrics } from "./metrics.js";

const extra = { hubFollowers: 0, hubFeeds: 0, hubs: 0, draining: false, unauthenticated: 0, jetstreamConsumers: 0 };
const line = (text: string, name: string) => new RegExp(`^${name.replace(/[{}+.]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1];

describe("bridge metrics", () => {
  it("metrics - one lag observed for the sockets of one event counts each delivery in the histogram", () => {
    const metrics = new BridgeMetrics();
    metrics.observeLag(0.003, 100);
    metrics.observeLag(0.02);
    const text = metrics.render(extra);
    expect(line(text, 'tidemark_bridge_delivery_lag_seconds_bucket{le="0.005"}')).toBe("100");
    expect(line(text, 'tidemark_bridge_delivery_lag_seconds_bucket{le="0.025"}')).toBe("101");
    expect(line(text, 'tidemark_bridge_delivery_lag_seconds_bucket{le="+Inf"}')).toBe("101");
    expect(line(text, "tidemark_bridge_delivery_lag_seconds_count")).toBe("101");
    expect(Number(line(text, "tidemark_bridge_delivery_lag_seconds_sum"))).toBeCloseTo(0.32, 9);
  });

  it("metrics - observing no delivery changes nothing", () => {
    const metrics = new BridgeMetrics();
    metrics.observeLag(0.003, 0);
    expect(line(metrics.render(extra), "tidemark_bridge_delivery_lag_seconds_count")).toBe("0");
  });
});
