/** The suites' bridge on Bun: `NATS_WS_URL`, `TIDEMARK_NAMESPACE`; prints `{"port":N}` once listening. */
import { createSync } from "../../../src/edge/index.js";
import { createBunBridge } from "../../../src/edge/bun.js";
import { bridgeOptions } from "./options.js";

declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: { port: number; hostname: string; fetch: (request: Request, server: unknown) => Response | Promise<Response>; websocket: unknown }): { port: number };
};

const sync = createSync({ nats: { servers: Bun.env.NATS_WS_URL! }, namespace: Bun.env.TIDEMARK_NAMESPACE });
await sync.ready();
const { bridge, websocket } = createBunBridge(bridgeOptions(sync));
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request, srv) => bridge.app.fetch(request, srv), websocket });
console.log(JSON.stringify({ port: server.port }));
