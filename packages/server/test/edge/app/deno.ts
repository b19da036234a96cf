/** The suites' bridge on Deno: `NATS_WS_URL`, `TIDEMARK_NAMESPACE`; prints `{"port":N}` once listening. */
import { createSync } from "../../../src/edge/index.js";
import { createDenoBridge } from "../../../src/edge/deno.js";
import { bridgeOptions } from "./options.js";

declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(options: { port: number; hostname: string; onListen(addr: { port: number }): void }, handler: (request: Request) => Response | Promise<Response>): unknown;
};

const sync = createSync({ nats: { servers: Deno.env.get("NATS_WS_URL")! }, namespace: Deno.env.get("TIDEMARK_NAMESPACE") });
await sync.ready();
const bridge = createDenoBridge(bridgeOptions(sync));
Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(JSON.stringify({ port })) }, bridge.app.fetch);
