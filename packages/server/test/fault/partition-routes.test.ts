/**
 * The proxied cluster harness itself: every route of every node goes through the fault
 * proxies (none is direct, none is learnt by gossip), and a cut of a node's links really
 * takes its routes away until healed.
 */
import { describe, it, expect } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { monitor, startTestCluster, until, type TestCluster } from "@tidemark/testing";

interface Routez {
  num_routes: number;
  routes?: { remote_id: string; did_solicit: boolean; ip: string; port: number }[];
}

const routez = (c: TestCluster, i: number) => monitor<Routez>(c.nodes[i]!.server!, "/routez");

describe("fault: routes through the fault proxy", () => {
  it("partition - every route runs through a proxy: the routes the nodes see are the proxies' connections, and a reset cut of a node leaves it none until healed", async () => {
    await using cluster = await startTestCluster({ proxiedRoutes: true });
    const mesh = cluster.mesh!;
    const ids = await Promise.all(cluster.nodes.map(async (n) => (await monitor<{ server_id: string }>(n.server!, "/varz")).server_id));
    const proxied = () => mesh.proxies.flat().reduce((n, p) => n + (p?.open ?? 0), 0);
    // Each route connection shows on both of its nodes and is one proxied connection.
    // (Equal counts settle it: a direct route would show on two nodes and on no proxy.)
    const counts = await until("the routes settled", async () => {
      const seen = await Promise.all(cluster.nodes.map((_, i) => routez(cluster, i)));
      const total = seen.reduce((n, r) => n + r.num_routes, 0);
      const meshed = seen.every((r) => new Set(r.routes?.map((x) => x.remote_id)).size === 2);
      return meshed && total === 2 * proxied() ? seen : undefined;
    });
    for (const [i, r] of counts.entries()) {
      expect(r.routes!.some((x) => x.remote_id === ids[i])).toBe(false);
      // No route is to a node's own cluster port (a direct dial).
      for (const route of r.routes!) expect(cluster.nodes.map((n) => n.clusterPort)).not.toContain(route.port);
    }

    console.log(`FIGURES partition-routes ${JSON.stringify({ routeConnections: proxied(), gossipDials: mesh.gossipDials })}`);
    // Node 0 cut from its peers with resets: it has no route left and gets none while cut.
    mesh.cut(0, 1, { forMs: 60_000 });
    mesh.cut(0, 2, { forMs: 60_000 });
    for (const p of [mesh.proxies[0]![1]!, mesh.proxies[0]![2]!, mesh.proxies[1]![0]!, mesh.proxies[2]![0]!]) p.cut({ reset: true, forMs: 60_000 });
    await until("node 0 has no route", async () => (await routez(cluster, 0)).num_routes === 0, 20_000);
    await sleep(3_000); // gossip would give it a direct route by now
    expect((await routez(cluster, 0)).num_routes).toBe(0);
    const others = await Promise.all([1, 2].map((i) => routez(cluster, i)));
    for (const r of others) expect(r.routes!.every((x) => x.remote_id !== ids[0])).toBe(true);

    mesh.heal();
    await until("node 0 has routes to both peers again", async () => new Set((await routez(cluster, 0)).routes?.map((x) => x.remote_id)).size === 2, 30_000);
    await cluster.ready();
  }, 120_000);
});
