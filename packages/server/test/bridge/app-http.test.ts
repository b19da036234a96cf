/**
 * Plain HTTP through the server that serves the bridge: an app that mounts the bridge gets its
 * own requests (method, query, headers, body) and its responses reach the client whole, streamed
 * ones included. On `ws` that is @hono/node-server; with TIDEMARK_BRIDGE_RUNTIME=uws it is
 * serveBridgeUws's own request and response glue (bridge/uws/http.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Hono } from "hono";
import { createNodeBridge } from "../../src/index.js";
import { bridgeRuntime, serveForTest, useBridgeFixture, type Served } from "./fixture.js";

const fx = useBridgeFixture();
const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serveApp(): Promise<string> {
  const sync = fx.sync();
  const bridge = createNodeBridge({ topics: [{ topic: sync.topic({ id: "notes" }), authorize: () => true }], authenticate: () => ({ id: "u" }), logger: () => undefined, sync });
  const app = new Hono();
  app.post("/echo", async (c) => c.json({ query: c.req.query("q"), type: c.req.header("content-type"), body: await c.req.text() }, 201, { "x-echo": "yes" }));
  app.get("/stream", () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const part of ["one,", "two,", "three"]) {
          controller.enqueue(encoder.encode(part));
          await new Promise((r) => setTimeout(r, 20));
        }
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/plain" } });
  });
  app.get("/empty", (c) => c.body(null, 204));
  app.route("/rt", bridge.app);
  const server = await serveForTest(bridge, { app });
  servers.push(server);
  return server.url;
}

describe(`app HTTP beside the bridge (${bridgeRuntime})`, () => {
  it("app http - a mounted app gets method, query, headers and body, and its status, headers and JSON come back", async () => {
    const url = await serveApp();
    const text = "é".repeat(40_000); // 80 KB of UTF-8: more than one chunk on the way in
    const res = await fetch(`${url}/echo?q=1`, { method: "POST", headers: { "content-type": "text/plain; charset=utf-8" }, body: text });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-echo")).toBe("yes");
    expect(await res.json()).toEqual({ query: "1", type: "text/plain; charset=utf-8", body: text });
  });

  it("app http - a streamed response arrives whole and in order; a 204 has no body; the bridge's own routes answer under the mount", async () => {
    const url = await serveApp();
    const streamed = await fetch(`${url}/stream`);
    expect(streamed.headers.get("content-type")).toBe("text/plain");
    expect(await streamed.text()).toBe("one,two,three");
    const empty = await fetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");
    expect((await fetch(`${url}/rt/healthz`)).status).toBe(200);
    expect(await (await fetch(`${url}/rt/metrics`)).text()).toContain("tidemark_bridge_connections");
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
  });
});
