// Runs with the INSTALLED @tidemark/server on the embedded NATS: publishes and replays, then
// serves the built page and a bridge for the browser part. Prints one JSON line when ready.
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { Hono } from "hono";
import { createNodeBridge, createSync, serveBridge } from "@tidemark/server";

const sync = createSync({ embedded: { dataDir: process.env.TIDEMARK_DATA_DIR } });
const inbox = sync.topic({ id: "inbox" });

const receipts = [];
for (const text of ["one", "two", "three"]) receipts.push(await inbox.publish({ data: { text }, tenantId: "acme" }));
const replayed = [];
for await (const event of inbox.replay({ tenantId: "acme" })) replayed.push(event.data.text);
if (replayed.join(",") !== "one,two,three") throw new Error(`replay gave ${replayed.join(",")}`);

// The other entry points load in Node too (Deno's and Bun's need their runtime's globals).
const { decodeCursor } = await import("@tidemark/shared");
const edge = await import("@tidemark/server/edge");
const workers = await import("@tidemark/server/edge/workers");
if (decodeCursor(receipts[0].cursor).sequence !== receipts[0].streamSequence) throw new Error("@tidemark/shared decodes another cursor");
if (typeof edge.createSync !== "function" || typeof workers.defineBridgeObject !== "function") throw new Error("an edge entry point is missing its exports");

const bridge = createNodeBridge({
  sync,
  topics: [{ topic: inbox, authorize: () => true }],
  authenticate: async (token) => (token === "scratch-user" ? { id: token } : null),
});
const dist = join(process.cwd(), "dist");
const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };
const app = new Hono();
app.post("/publish", async (c) => c.json(await inbox.publish({ data: await c.req.json(), tenantId: "acme" })));
app.get("/stats", (c) => c.json({ connections: bridge.connectionCount }));
app.route("/", bridge.app);
app.get("/*", (c) => {
  const file = join(dist, c.req.path === "/" ? "index.html" : c.req.path);
  if (!file.startsWith(dist) || !existsSync(file)) return c.notFound();
  return c.body(readFileSync(file), 200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
});
const server = await serveBridge(bridge, { port: 0, app });
console.log(JSON.stringify({ port: server.port, published: receipts.length, replayed: replayed.length }));
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => void server.close().then(() => sync.close()).then(() => process.exit(0)));
