/**
 * The NATS connection options every Sync (and so every bridge) starts from, in one place. They
 * are tuned for a frozen server (a GC stall, a VM migration, SIGSTOP), which keeps its TCP
 * connections open and still accepts new ones from its kernel backlog but answers nothing:
 *
 * - a connection that misses two pings, sent every 2 s, is dropped: 4–6 s after the server
 *   went silent (nats.js's own defaults, 2 min × 2, take minutes);
 * - a dial that gets no INFO within 5 s fails (nats.js waits 20 s), so a reconnect that lands on
 *   the frozen server moves on;
 * - a reconnect does not go back first to the server it just lost when the pool has another
 *   (nats.js otherwise dials the same server again first).
 *
 * `nats` options of a Sync override any of these.
 */
import type { ConnectionOptions, ReconnectToServerHandler } from "@nats-io/nats-core";

/** Ping interval of a NATS connection, ms. */
export const NATS_PING_INTERVAL_MS = 2_000;
/** Unanswered pings after which the connection is dropped as stale. */
export const NATS_MAX_PINGS_OUT = 2;
/** Bound on one dial: TCP connect plus the server's INFO, ms. */
export const NATS_CONNECT_TIMEOUT_MS = 5_000;

/**
 * A `reconnectToServer` that never dials the server of the previous attempt first when the pool
 * has another. Each connection gets its own (it remembers the last server it dialed).
 */
export function rotateAwayFromLast(): ReconnectToServerHandler {
  let last: string | undefined;
  return (pool) => {
    const pick = pool.length > 1 && pool[0]!.listen === last ? pool[1]! : pool[0];
    last = pick?.listen;
    return pick ?? null;
  };
}

/** The defaults of a Tidemark NATS connection (a fresh object each call). */
export function natsConnectionDefaults(): ConnectionOptions {
  return {
    name: "tidemark",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: NATS_PING_INTERVAL_MS,
    maxPingOut: NATS_MAX_PINGS_OUT,
    timeout: NATS_CONNECT_TIMEOUT_MS,
    reconnectToServer: rotateAwayFromLast(),
    // nats.js otherwise builds two Error objects (stack traces) per request, a quarter of the
    // client's CPU per publish; NATS errors only reach users as the `cause` of a Tidemark
    // error, which has its own stack.
    noAsyncTraces: true,
  };
}
