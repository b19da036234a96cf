import { describe, expect, it } from "vitest";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { InvalidArgumentError } from "@tidemark/shared";
import { createMeterRegistry } from "./meters.js";
import { createSync } from "../node-sync.js";
import { createBridge } from "../bridge/bridge.js";
import type { BridgeSnapshot } from "./bridge-meter.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

async function gauge(reader: MetricReader, name: string): Promise<number[]> {
  const { resourceMetrics } = await reader.collect();
  const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === name);
  return found.flatMap((m) => m.dataPoints.map((p) => p.value as number));
}

const snapshot = (connections: number): (() => BridgeSnapshot) => () => ({
  gauges: { tidemark_bridge_connections: connections },
  labelledGauges: {},
  counters: {},
  labelledCounters: {},
});

describe("meters", () => {
  it("meters - one registry sums its bridges and hub registries; another registry's provider sees none of them", async () => {
    const [a, b] = [new TestReader(), new TestReader()];
    const one = createMeterRegistry({ meterProvider: new MeterProvider({ readers: [a] }) });
    createMeterRegistry({ meterProvider: new MeterProvider({ readers: [b] }) }).observeBridge(snapshot(7));
    const stops = [one.observeBridge(snapshot(2)), one.observeBridge(snapshot(3)), one.observeHubs(() => 4)];
    expect(await gauge(a, "tidemark_bridge_connections")).toEqual([5]);
    expect(await gauge(a, "tidemark_hub_followers")).toEqual([4]);
    expect(await gauge(b, "tidemark_bridge_connections")).toEqual([7]);
    stops[0]!();
    expect(await gauge(a, "tidemark_bridge_connections")).toEqual([3]);
  });

  it("meters - createSync and createBridge refuse a `meters` that is not a registry with InvalidArgumentError", () => {
    const meters = { observeBridge: () => () => undefined } as never;
    expect(() => createSync({ meters, nats: { servers: "nats://127.0.0.1:4222" }, logger: false })).toThrow(InvalidArgumentError);
    expect(() => createBridge({ meters, topics: [], authenticate: () => null, upgradeWebSocket: (() => undefined) as never })).toThrow(InvalidArgumentError);
  });
});
