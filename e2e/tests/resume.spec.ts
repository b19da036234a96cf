import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { demoDir } from "../lib/demo-server.js";
import { expectConnections, expectShown, openTabs, test, expect } from "../lib/demo.js";

test("resume - close every tab, publish, reopen: the missed events appear once", async ({ context, server }) => {
  const [first, second] = await openTabs(context, server.url, 2);
  await server.publish("acme", "seen", 2);
  const seen = await server.retainedIds("acme");
  await expectShown(first!, seen);
  await expectShown(second!, seen);

  await first!.close();
  await second!.close();
  // The SharedWorker goes with the last tab, and so does the server's connection.
  await expectConnections(server, 0);
  await server.publish("acme", "missed", 3);
  const all = await server.retainedIds("acme");
  expect(all).toHaveLength(5);

  const [again] = await openTabs(context, server.url, 1);
  await expectShown(again!, all);
  await expect(again!.getByTestId("unread-count")).toHaveText("5");
  await server.publish("acme", "live again");
  await expectShown(again!, await server.retainedIds("acme"));
  await expectConnections(server, 1);
});

test("resume - a reload shows the saved history at once, before the socket is back", async ({ context, server }) => {
  const [tab] = await openTabs(context, server.url, 1);
  await server.publish("acme", "kept", 4);
  const ids = await server.retainedIds("acme");
  await expectShown(tab!, ids);

  // The bridge dies; only the page's files are served (as a CDN or a service worker would).
  await server.kill9();
  const files = await serveStatic(join(demoDir, "dist"), server.port);
  try {
    await tab!.reload();
    await expectShown(tab!, ids);
    await expect(tab!.getByTestId("connection-status")).not.toHaveText("live");
  } finally {
    await files.close();
  }
  await server.launch();
  await expect(tab!.getByTestId("connection-status")).toHaveText("live", { timeout: 20_000 });
  await server.publish("acme", "back");
  await expectShown(tab!, await server.retainedIds("acme"));
});

/** A bare static file server: the page loads, the WebSocket upgrade has nobody to answer it. */
async function serveStatic(root: string, port: number): Promise<{ close(): Promise<void> }> {
  const server = createServer((req, res) => void serveFile(root, req.url, res));
  server.on("upgrade", (_req, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Answers one request with a file under root (never rejects: a missing file is a 404). */
async function serveFile(root: string, url: string | undefined, res: ServerResponse): Promise<void> {
  const path = new URL(url ?? "/", "http://x").pathname;
  const file = join(root, path === "/" || !extname(path) ? "index.html" : path);
  try {
    const body = await readFile(file);
    const type = { ".js": "text/javascript", ".css": "text/css", ".html": "text/html" }[extname(file)] ?? "application/octet-stream";
    res.writeHead(200, { "content-type": type }).end(body);
  } catch {
    res.writeHead(path.startsWith("/api/") ? 503 : 404).end();
  }
}
