/**
 * The demo's HTTP routes: tokens for the client and the page, a guarded publish route, the
 * server's own connection count, and the built page. The bridge is mounted beside them in
 * main.ts.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { serveStatic } from "@hono/node-server/serve-static";
import { isTidemarkError, type Topic } from "@tidemark/server";
import { DEMO_USERS, USER_COOKIE, mayAccess, userOf, DEMO_TOPIC, type DemoAuth } from "./auth.js";
import { bearerAuth, jsonOnly, ownHost, ownPage, sameOrigin, type DemoEnv } from "./guards.js";

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
  /** Issues and verifies the demo's tokens (the bridge uses the same). */
  auth: DemoAuth;
  /** Origins allowed to publish: the demo's own. */
  origins: readonly string[];
  /** Names the demo answers to in `Host` (lower case, no port), on every route: see `ownHost`. */
  hosts: readonly string[];
  /** The bridge's app (`/ws`, `/healthz`, `/readyz`, `/metrics`), mounted before the page. */
  bridge?: Hono;
}

/** Most events one publish request may ask for. */
export const MAX_COUNT = 100;
/** Largest publish body accepted (a 500-character text fits many times over). */
const MAX_BODY_BYTES = 8 * 1024;

/** @example serveBridge(bridge, { app: createDemoApp({ topic, connections, distDir, auth, origins, hosts, bridge: bridge.app }) }) */
export function createDemoApp(options: DemoAppOptions): Hono {
  const { topic, auth } = options;
  const app = new Hono();
  // First, for every route (the bridge's upgrade included): a page of another site that reaches
  // this server by DNS rebinding gets nothing, not even the page.
  app.use("*", ownHost(options.hosts));

  // The demo's users have no password: "login" signs a token for the signed-in user (the
  // demo_user cookie, default ada). The client's getToken uses /api/token, counted (it asks
  // once per browser profile, not once per tab); the page's publish form and scripts use
  // /api/login, not counted. /api/login with {user} also signs in as that user (sets the cookie).
  let tokens = 0;
  app.get("/api/token", ownPage(), async (c) => {
    tokens++;
    c.header("cache-control", "no-store");
    return c.json(await auth.issue(userOf(c.req.header("cookie"))));
  });
  app.post("/api/login", sameOrigin(options.origins), async (c) => {
    c.header("cache-control", "no-store");
    const body = (await c.req.json().catch(() => undefined)) as { user?: unknown } | undefined;
    if (body?.user === undefined) return c.json(await auth.issue(userOf(c.req.header("cookie"))));
    const user = typeof body.user === "string" ? DEMO_USERS[body.user] : undefined;
    if (!user) return c.json({ code: "INVALID_ARGUMENT", message: `no demo user ${JSON.stringify(body.user)}` }, 400);
    c.header("set-cookie", `${USER_COOKIE}=${user.user}; Path=/; SameSite=Lax`);
    return c.json(await auth.issue(user));
  });

  app.get("/api/stats", (c) => c.json({ connections: options.connections(), tokens }));

  // What the broker still retains for a tenant: the ground truth the e2e tests compare with.
  app.get("/api/events", async (c) => {
    const tenantId = c.req.query("tenantId");
    if (!mayAccess(userOf(c.req.header("cookie")), DEMO_TOPIC, tenantId)) return c.json({ code: "FORBIDDEN", message: "not your tenant" }, 403);
    const ids: string[] = [];
    for await (const event of topic.replay({ tenantId })) ids.push(event.eventId);
    return c.json({ ids });
  });

  // Publishing changes what every tab of the tenant shows: only the demo's own page, with
  // the user's token, into a tenant the user may see, a few events at a time.
  // (A sub-app of its own: its handlers see the principal the token guard verified.)
  const guarded = new Hono<DemoEnv>();
  guarded.post(
    "/api/publish",
    sameOrigin(options.origins),
    bearerAuth(auth),
    jsonOnly(),
    bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.json({ code: "LIMIT_EXCEEDED", message: `body over ${MAX_BODY_BYTES} bytes` }, 413) }),
    async (c) => {
      const principal = c.get("principal");
      const body = (await c.req.json().catch(() => undefined)) as { tenantId?: unknown; text?: unknown; count?: unknown } | undefined;
      const tenantId = typeof body?.tenantId === "string" ? body.tenantId : undefined;
      const text = typeof body?.text === "string" ? body.text.trim().slice(0, 500) : "";
      const count = body?.count === undefined ? 1 : body.count;
      if (!text || typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
        return c.json({ code: "INVALID_ARGUMENT", message: `need text and a count from 1 to ${MAX_COUNT}` }, 400);
      }
      if (!mayAccess(principal, DEMO_TOPIC, tenantId)) {
        return c.json({ code: "FORBIDDEN", message: `you may not publish to tenant ${String(tenantId)}` }, 403);
      }
      try {
        // In flight, started in order: each call sends before the next starts, on the Sync's
        // one connection, so the broker stores them in this order and acknowledges them in one
        // round trip (one fsync each under durability "fsync") instead of one after another.
        const pending = [];
        for (let i = 0; i < count; i++) {
          pending.push(topic.publish({ tenantId, data: count === 1 ? { text } : { text: `${text} #${i + 1}`, i: i + 1 } }));
        }
        const receipts = await Promise.all(pending);
        return c.json({ published: receipts.length, last: receipts.at(-1) });
      } catch (err) {
        const code = isTidemarkError(err) ? err.code : "INTERNAL";
        return c.json({ code, message: (err as Error).message }, code === "BROKER_UNAVAILABLE" ? 503 : 500);
      }
    },
  );

  app.route("/", guarded);

  if (options.bridge) app.route("/", options.bridge);
  app.use("/*", serveStatic({ root: options.distDir }));
  app.get("/*", serveStatic({ root: options.distDir, path: "index.html" }));
  return app;
}
