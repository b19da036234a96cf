/**
 * Hostile users, third round (issue 24, item 3): a neighbour that keeps the process's cap of
 * sockets waiting for `hello` full, from several loopback addresses, must not lock out a client
 * that says hello. Real bridge, real sockets bound to 127.0.0.x; counts read from /metrics.
 */
import { describe, it, expect } from "vitest";
import WebSocket from "ws";
import { TestClient } from "../bridge/client.js";
import { until } from "@tidemark/testing";
import { ownTenants, useBridgeFixture } from "../bridge/fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("alice", { id: "alice", tenants: ["a"] });

/** A gauge of the bridge's own /metrics. */
async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

/**
 * Holds `perAddress` silent sockets from each of `addresses`: every `topUpMs` it opens new ones
 * for those the server refused or closed. Counts the upgrades it tried and how its sockets ended.
 */
function neighbour(wsUrl: string, addresses: string[], perAddress: number, topUpMs: number) {
  const held = new Map(addresses.map((a) => [a, new Set<WebSocket>()]));
  const counts = { tried: 0, refused: 0, closedBy: new Map<number, number>() };
  const topUp = () => {
    for (const [localAddress, sockets] of held) {
      while (sockets.size < perAddress) {
        counts.tried++;
        const ws = new WebSocket(wsUrl, { localAddress });
        sockets.add(ws);
        ws.on("error", () => undefined);
        ws.on("unexpected-response", (_req, res) => {
          counts.refused++;
          res.resume();
          sockets.delete(ws);
        });
        ws.on("close", (code) => {
          counts.closedBy.set(code, (counts.closedBy.get(code) ?? 0) + 1);
          sockets.delete(ws);
        });
      }
    }
  };
  topUp();
  const timer = setInterval(topUp, topUpMs);
  return {
    counts,
    stop() {
      clearInterval(timer);
      for (const sockets of held.values()) for (const ws of sockets) ws.terminate();
    },
  };
}

describe("hostile: a neighbour fills the cap of sockets waiting for hello", () => {
  it("crowd - a client that says hello gets in every time and receives its events while silent sockets from six addresses fill the cap", async () => {
    const sync = fx.sync();
    const topic = sync.topic<{ n: number }>({ id: "notes" });
    // The proportions (1,000 per process, 200 per address, six addresses) at a tenth of
    // the process cap; the hello deadlines keep their defaults.
    const cap = 60;
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxUnauthenticated: cap, maxUnauthenticatedPerAddress: 15 }, logLevel: "warn" }, sync);
    const addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"];
    // 6 x 11 = 66 sockets: more than the process cap, each address within its own.
    const crowd = neighbour(run.wsUrl, addresses, 11, 200);
    const attempts = 20;
    let admitted = 0;
    const refusals: string[] = [];
    try {
      for (let n = 0; n < attempts; n++) {
        // Each attempt meets a full cap.
        await until("the neighbour fills the cap", async () => (await gauge(run.server.url, "tidemark_bridge_unauthenticated_connections")) >= cap, 15_000, 20);
        try {
          // The event is published first and read by resuming from the cursor before it.
          const receipt = await topic.publish({ data: { n }, tenantId: "a" });
          const client = await TestClient.connect(run.wsUrl, "alice");
          const { hub } = await client.subscribe({ id: "s", topic: "notes", tenantId: "a", cursor: topic.cursorAt(receipt.streamSequence - 1) });
          const [event] = await client.events(String(hub), 1);
          expect((event!.event as { data: { n: number } }).data.n).toBe(n);
          client.ws.terminate();
          admitted++;
        } catch (err) {
          refusals.push(String(err));
        }
      }
      // The neighbour never held more than the cap (the gauge is read at the end too).
      expect(await gauge(run.server.url, "tidemark_bridge_unauthenticated_connections")).toBeLessThanOrEqual(cap);
    } finally {
      crowd.stop();
    }
    expect(refusals).toEqual([]);
    expect(admitted).toBe(attempts);
    // Room was made by closing the neighbour's oldest waiting sockets (1013), not by refusing.
    expect(crowd.counts.closedBy.get(1013) ?? 0).toBeGreaterThanOrEqual(attempts);
    expect(run.bridge.metrics()).toMatch(/tidemark_bridge_rejected_total\{reason="unauthenticated_evicted"\} [1-9]/);
  }, 120_000);
});
