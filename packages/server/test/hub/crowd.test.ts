/**
 * Issue 24, item 8: a crowd of bridge connections that subscribe to the same quiet tenant and
 * drop their sockets at once must leave no JetStream consumer behind. Before, in most rounds
 * one read consumer stayed (with its hub follower) until the tenant's next event: the bridge's
 * hub group ended itself from its caught-up callback and its iteration waited on.
 */
import { describe, it, expect } from "vitest";
import { hubRegistryOf } from "../../src/index.js";
import { ownTenants, useBridgeFixture } from "../bridge/fixture.js";
import { TestClient } from "../bridge/client.js";
import { consumersOf, eventually } from "./fixture.js";

const fx = useBridgeFixture();
fx.tokens.set("crowd", { id: "crowd", tenants: ["quiet", "busy"] });

const ROUNDS = 6;
const SOCKETS = 60;

describe("hub - a crowd leaving at once", () => {
  it(`hub - ${SOCKETS} bridge connections of a quiet tenant that drop together leave no consumer and no follower, round after round`, async () => {
    const sync = fx.sync();
    const topic = sync.topic<number>({ id: "notes" });
    await topic.publish({ data: 0, tenantId: "busy" });
    const run = await fx.start({ topics: [{ topic, authorize: ownTenants }], limits: { maxConnectionsPerPrincipal: 1_000 }, logLevel: "warn" }, sync);
    const left: { round: number; consumers: number; followers: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const clients = await Promise.all(Array.from({ length: SOCKETS }, () => TestClient.connect(run.wsUrl, "crowd")));
      const head = await topic.head();
      // Half resume from the head, half are live-only; they drop while their hub is starting
      // (at once, a few ms in, or once some are caught up).
      clients.forEach((c, i) => c.send({ type: "subscribe", id: "s", topic: "notes", tenantId: "quiet", mode: "hub", ...(i % 2 ? { cursor: head } : {}) }));
      await new Promise((r) => setTimeout(r, [0, 5, 30][round % 3]));
      for (const c of clients) c.ws.terminate();
      await Promise.all(clients.map((c) => c.closed));
      await eventually(() => run.bridge.connectionCount === 0, 10_000, "the bridge saw every socket close");
      // Gone, and still gone a second later: a hub still starting (a head read, a feed's
      // consumer) shows up after the sockets closed.
      let zero = 0;
      const gone = async () => (await consumersOf(fx.nats, sync.namespace)) === 0 && hubRegistryOf(sync).followerCount === 0;
      const cleared = await eventually(async () => ((zero = (await gone()) ? zero + 1 : 0), zero >= 30), 15_000).then(() => true, () => false);
      if (!cleared) {
        left.push({ round, consumers: await consumersOf(fx.nats, sync.namespace), followers: hubRegistryOf(sync).followerCount });
        break;
      }
    }
    expect(left).toEqual([]);
    expect(sync.stats().consumers).toBe(0);
  });
});
