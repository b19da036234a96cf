/**
 * FANOUT_DEBUG's look at the broker during a storm: messages each client connection sent to
 * nats-server (requests, acks, publishes) and received, and JetStream API requests, from the
 * monitoring endpoints (/connz, /jsz) before and after. A connection's in_msgs are what it SENT.
 */
import { monitorJson } from "../lib/monitor.js";

interface Conn {
  cid: number;
  name?: string;
  in_msgs: number;
  out_msgs: number;
}

export interface NatsSnapshot {
  conns: Map<number, Conn>;
  apiTotal: number;
}

export async function natsSnapshot(monitorUrl: string | undefined): Promise<NatsSnapshot> {
  const connz = await monitorJson<{ connections?: Conn[] }>(monitorUrl, "/connz?limit=1024");
  const jsz = await monitorJson<{ api?: { total?: number } }>(monitorUrl, "/jsz");
  return { conns: new Map((connz.connections ?? []).map((c) => [c.cid, c])), apiTotal: jsz.api?.total ?? 0 };
}

/** One line per connection that moved, busiest first, and the JetStream API requests in between. */
export function natsDelta(before: NatsSnapshot, after: NatsSnapshot): string {
  const rows: string[] = [];
  const moved = [...after.conns.values()]
    .map((c) => {
      const b = before.conns.get(c.cid);
      return { name: c.name ?? `cid ${c.cid}`, sent: c.in_msgs - (b?.in_msgs ?? 0), received: c.out_msgs - (b?.out_msgs ?? 0) };
    })
    .filter((c) => c.sent + c.received > 0)
    .sort((a, b) => b.sent + b.received - (a.sent + a.received));
  for (const c of moved) rows.push(`${c.name}: sent ${c.sent} msgs (requests, acks, publishes), received ${c.received}`);
  rows.push(`JetStream API requests: ${after.apiTotal - before.apiTotal}`);
  return rows.join("; ");
}
