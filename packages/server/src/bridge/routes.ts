/**
 * @internal The operations routes of a bridge: `/healthz` (the process serves), `/readyz` (not
 * draining, the Sync connected, a JetStream call answers; cached 5 s) and `/metrics`.
 */
import type { Hono } from "hono";
import type { BridgeContext } from "./context.js";

/** How long a JetStream probe result of `/readyz` is reused. */
const PROBE_CACHE_MS = 5_000;
const PROBE_TIMEOUT_MS = 3_000;

/** Adds the routes to `app`. `render` gives the Prometheus text of `/metrics`. */
export function addOperationsRoutes<P>(app: Hono, context: BridgeContext<P>, render: () => string): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  let jsProbe: { at: number; ok: boolean } | undefined;
  app.get("/readyz", async (c) => {
    const checks: Record<string, boolean> = { accepting: !context.draining };
    const sync = context.options.sync;
    if (sync) {
      checks.nats = sync.connected;
      if (!jsProbe || Date.now() - jsProbe.at > PROBE_CACHE_MS) {
        let ok = false;
        try {
          await Promise.race([sync.ready().then(() => sync.listTopics({ idPrefix: "\u0000" })), timeout(PROBE_TIMEOUT_MS)]);
          ok = true;
        } catch {
          ok = false;
        }
        jsProbe = { at: Date.now(), ok };
      }
      checks.jetstream = jsProbe.ok;
      checks.nats = sync.connected;
    }
    const ready = Object.values(checks).every(Boolean);
    return c.json({ status: ready ? "ready" : "not_ready", checks }, ready ? 200 : 503);
  });

  app.get("/metrics", (c) => c.body(render(), 200, { "content-type": "text/plain; version=0.0.4" }));
}

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms).unref?.());
}
