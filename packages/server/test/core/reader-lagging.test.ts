/**
 * A finite replay must reach the head it captured: a replica that is behind (cut from the
 * stream leader while events are published) reports nothing pending below that head, and a
 * read whose consumer sits on it must not end there silently (docs/core.md "How reads reach
 * the broker", docs/reliability.md "Findings").
 *
 * A 3-node cluster whose routes go through fault proxies: the link between the stream leader
 * and one follower (X) is cut, events are published through the other follower (Y) — the
 * leader and Y are a quorum — and the reader, on Y, replays. Each replay's ordered consumer is
 * placed on a random replica of the stream (nats-server shuffles the peers for an R1
 * consumer), so about a third of the replays read X's store.
 */
import { describe, it, expect } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { monitor, startTestCluster, uniqueNamespace, until } from "@tidemark/testing";
import { BrokerUnavailableError, createSync, type TidemarkEvent } from "../../src/index.js";
import { topicNames } from "../../src/internal.js";
import { collect } from "./fixture.js";

type Jsz = { meta_cluster?: { leader?: string } };

describe("reads from a replica that is behind", () => {
  it("read - a replay whose consumer sits on a replica cut off from the leader yields every event up to the head it captured, whole topic and tenant", async () => {
    await using cluster = await startTestCluster({ proxiedRoutes: true });
    const mesh = cluster.mesh!;
    const namespace = uniqueNamespace();
    const stream = topicNames(namespace, "lag.events").stream;
    const nc = await connect({ servers: cluster.urls });
    const setup = createSync({ namespace, nats: { servers: cluster.urls } });
    try {
      const jsm = await jetstreamManager(nc);
      const t0 = setup.topic({ id: "lag.events", replicas: 3 });
      // Right after the start a peer may not be known yet ("no suitable peers"): try again.
      await until("the R3 topic is created", () => t0.head().then(() => true), 30_000, 500);
      for (let i = 0; i < 5; i++) await t0.publish({ data: i, tenantId: i % 2 ? "odd" : "even" });
      // The stream leader must not be the meta leader: X, cut from the stream leader, still
      // learns of the consumers placed on it.
      const index = (name: string | undefined) => cluster.nodes.findIndex((n) => n.name === name);
      const leader = await until("the stream leader is not the meta leader", async () => {
        const l = index((await jsm.streams.info(stream)).cluster?.leader);
        const meta = index((await monitor<Jsz>(cluster.nodes[0]!.server!, "/jsz")).meta_cluster?.leader);
        if (l < 0 || meta < 0) return undefined;
        if (l !== meta) return l;
        await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 5_000 }).catch(() => undefined);
        return undefined;
      }, 30_000, 500);
      const [x, y] = [0, 1, 2].filter((i) => i !== leader) as [number, number];

      const reader = createSync({ namespace, nats: { servers: cluster.nodes[y]!.url } });
      try {
        const topic = reader.topic({ id: "lag.events", replicas: 3 });
        await topic.head();
        mesh.cut(leader, x, { forMs: 30_000 });
        const receipts = await Promise.all(Array.from({ length: 95 }, (_, i) => topic.publish({ data: 5 + i, tenantId: (5 + i) % 2 ? "odd" : "even" })));
        const head = await topic.head();
        expect(topic.cursorSequence(head)).toBe(100);

        const data = (events: TidemarkEvent[]) => events.map((e) => e.data as number);
        // Stream order, from the receipts: publishes in flight promise no order among
        // themselves (one retried across the cut lands after later ones, docs/core.md).
        const bySequence = receipts.map((r, i) => [r.streamSequence, 5 + i] as const).sort((a, b) => a[0] - b[0]);
        const all = [0, 1, 2, 3, 4, ...bySequence.map(([, d]) => d)];
        // Each replay yields every event, or fails with a retryable BrokerUnavailableError
        // (a consumer that could not be created in time); never fewer events and no error.
        const outcomes: string[] = [];
        const check = async (tenantId: string | undefined, want: number[]) => {
          try {
            const got = data(await collect(topic.replay({ tenantId })));
            outcomes.push(got.length === want.length ? "full" : `short ${got.length}/${want.length}`);
            expect(got).toEqual(want);
          } catch (err) {
            if (!(err instanceof BrokerUnavailableError)) throw err;
            outcomes.push(`failed ${err.code}: ${err.message.slice(0, 160)}`);
          }
        };
        const started = Date.now();
        // All at once, before the cut-off node's elections (it campaigns after a few seconds
        // without its leader) unsettle the cluster and requests time out.
        await Promise.all(
          Array.from({ length: 10 }, () => [check(undefined, all), check("odd", all.filter((i) => i % 2))]).flat(),
        );
        const full = outcomes.filter((o) => o === "full").length;
        console.log(`FIGURES reader-lagging ${JSON.stringify({ ms: Date.now() - started, full, failed: outcomes.length - full, first: outcomes.find((o) => o !== "full") })}`);
        expect(full).toBeGreaterThan(0);
      } finally {
        mesh.heal();
        await reader.close();
      }
    } finally {
      await setup.close();
      await nc.close();
    }
  }, 120_000);

});
