/**
 * The server: one Hono app with the bridge on /ws, a token route, an order route, and the
 * built page; the worker runs in the same process.
 *
 *   TOKEN_SECRET=$(openssl rand -base64 32) pnpm start    # http://localhost:3000
 */
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";
import { createNodeBridge, expose, getDefaultSync, serveBridge, signToken, tokenAuthenticator, type TokenPrincipal } from "@tidemark/server";
import { notifications, orders, type Order } from "./topics.js";
import { startOrderWorker } from "./worker.js";

const port = Number(process.env.PORT ?? 3000);
// Unset or shorter than 32 bytes, tokenAuthenticator() throws here: the server does not start.
const key = process.env.TOKEN_SECRET;
// The page's origins: this server, and Vite's dev server (`pnpm dev`, another port, so another
// origin). A page whose origin is not listed gets status "failed" with ORIGIN_REFUSED.
const origins = (process.env.APP_ORIGINS ?? `http://localhost:${port},http://127.0.0.1:${port},http://localhost:5173`).split(",");

/** This app's users and their shops (tenants). Use your own sign-in. */
const users: Record<string, string[]> = { ada: ["acme"], bob: ["acme", "globex"] };

const sync = getDefaultSync();
const bridge = createNodeBridge<TokenPrincipal>({
  sync,
  // Browsers may read a shop's notifications only with a token that names the shop.
  topics: [expose(notifications(), (user, { tenantId }) => tenantId !== undefined && user.tenants.includes(tenantId))],
  authenticate: tokenAuthenticator({ key }),
  origins,
});

const app = new Hono();
// The client's getToken. A real app signs in first (a session cookie); here `?user=` picks one.
app.get("/api/token", async (c) => {
  const user = c.req.query("user") ?? "ada";
  const tenants = users[user];
  if (!tenants) return c.json({ error: "unknown user" }, 404);
  const token = await signToken({ sub: user, tenants }, { key, expiresIn: "15m" });
  return c.text(token);
});
// The shop's checkout: an order for a shop. A real app checks who may order.
app.post("/api/orders", async (c) => {
  const body = (await c.req.json()) as Partial<Order> & { shop?: string };
  if (typeof body.shop !== "string" || typeof body.item !== "string" || typeof body.quantity !== "number") {
    return c.json({ error: "shop, item and quantity are required" }, 400);
  }
  const orderId = crypto.randomUUID().slice(0, 8);
  const receipt = await orders().publish({ tenantId: body.shop, data: { orderId, item: body.item, quantity: body.quantity } });
  return c.json({ orderId, cursor: receipt.cursor });
});
app.route("/", bridge.app); // the WebSocket endpoint on /ws, and /healthz, /readyz, /metrics
app.use("/*", serveStatic({ root: "./dist" }));

const worker = await startOrderWorker();
const server = await serveBridge(bridge, { app, port, hostname: "127.0.0.1" });
console.log(`first app on http://localhost:${port}`);

async function stop(): Promise<void> {
  await server.close(); // drains the bridge: clients are told to reconnect
  await worker.stop();
  await sync.close();
  process.exit(0);
}
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
