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

  it("metrics - deliveries of one event in a row count each, in the counter and the histogram, scraped in the same turn or later", async () => {
    const metrics = new BridgeMetrics();
    const now = Date.now();
    const a = { publishedAt: now - 3 };
    const b = { publishedAt: now - 20_000 };
    for (let i = 0; i < 100; i++) metrics.delivered(a);
    metrics.delivered(b);
    let text = metrics.render(extra); // same turn: nothing pending is lost
    expect(line(text, "tidemark_bridge_events_delivered_total")).toBe("101");
    expect(line(text, "tidemark_bridge_delivery_lag_seconds_count")).toBe("101");
    expect(line(text, 'tidemark_bridge_delivery_lag_seconds_bucket{le="0.5"}')).toBe("100");
    metrics.delivered(a);
    await Promise.resolve();
    text = metrics.render(extra);
    expect(line(text, "tidemark_bridge_delivery_lag_seconds_count")).toBe("102");
  });
});
