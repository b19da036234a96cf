/**
 * The demo's HTTP routes: a token for the page, a publish form handler, the server's own
 * connection count, and the built page. The bridge is mounted beside them in main.ts.
 */
import { Hono } from "hono";
import { serveStatic } from "@hono/node-server/serve-static";
import { isTidemarkError, type Topic } from "@tidemark/server";
import { DEMO_USER, authenticate, mayAccess, tokenFor, DEMO_TOPIC } from "./auth.js";

export interface Note {
  text: string;
  /** Position in a batch published at once (bench and tests). */
  i?: number;
}

export interface DemoAppOptions {
  topic: Topic<Note>;
  /** WebSocket connections the bridge holds right now. */
  connections(): number;
  /** Folder of the built page (vite build). */
  distDir: string;
  /** Lifetime of the tokens handed out; undefined: they do not expire. */
  tokenTtlMs?: number;
  /** The bridge's app (`/ws`, `/healthz`, `/readyz`, `/metrics`), mounted before the page. */
  bridge?: Hono;
}

const MAX_BATCH = 1_000;

/** @example serveBridge(bridge, { app: createDemoApp({ topic, connections, distDir, bridge: bridge.app }) }) */
export function createDemoApp(options: DemoAppOptions): Hono {
  const { topic } = options;
  const app = new Hono();

  // Tokens handed out: the client asks once per browser profile, not once per tab.
  let tokens = 0;
  app.get("/api/token", (c) => {
    tokens++;
    return c.json({ token: tokenFor(DEMO_USER, options.tokenTtlMs) });
  });

  app.get("/api/stats", (c) => c.json({ connections: options.connections(), tokens }));

  // What the broker still retains for a tenant: the ground truth the e2e tests compare with.
  app.get("/api/events", async (c) => {
    const tenantId = c.req.query("tenantId");
    if (!mayAccess(DEMO_USER, DEMO_TOPIC, tenantId)) return c.json({ code: "FORBIDDEN", message: "not your tenant" }, 403);
    const ids: string[] = [];
    for await (const event of topic.replay({ tenantId })) ids.push(event.eventId);
    return c.json({ ids });
  });

  // The page uses the same token as the socket: it travels in a header here.
  app.post("/api/publish", async (c) => {
    const principal = authenticate(c.req.header("x-demo-token") ?? tokenFor(DEMO_USER));
    const body = (await c.req.json().catch(() => undefined)) as { tenantId?: unknown; text?: unknown; count?: unknown } | undefined;
    const tenantId = typeof body?.tenantId === "string" ? body.tenantId : undefined;
    const text = typeof body?.text === "string" ? body.text.trim().slice(0, 500) : "";
    const count = body?.count === undefined ? 1 : Number(body.count);
    if (!text || !Number.isInteger(count) || count < 1 || count > MAX_BATCH) {
      return c.json({ code: "INVALID_ARGUMENT", message: `need text and 1..${MAX_BATCH} count` }, 400);
    }
    if (!principal || !mayAccess(principal, DEMO_TOPIC, tenantId)) {
      return c.json({ code: "FORBIDDEN", message: `you may not publish to tenant ${String(tenantId)}` }, 403);
    }
    try {
      const receipts = [];
      for (let i = 0; i < count; i++) {
        receipts.push(await topic.publish({ tenantId, data: count === 1 ? { text } : { text: `${text} #${i + 1}`, i: i + 1 } }));
      }
      return c.json({ published: receipts.length, last: receipts.at(-1) });
    } catch (err) {
      const code = isTidemarkError(err) ? err.code : "INTERNAL";
      return c.json({ code, message: (err as Error).message }, code === "BROKER_UNAVAILABLE" ? 503 : 500);
    }
  });

  if (options.bridge) app.route("/", options.bridge);
  app.use("/*", serveStatic({ root: options.distDir }));
  app.get("/*", serveStatic({ root: options.distDir, path: "index.html" }));
  return app;
}
