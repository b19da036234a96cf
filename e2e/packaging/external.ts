/**
 * External NATS through the environment, with the installed `@tidemark/server`: an app that
 * calls `createSync()` with no broker options must use the nats-server that `TIDEMARK_NATS_URL`
 * names (its stream is on that server, no embedded server writes to the data directory) and
 * say so once on stderr. Before, `createSync()` quietly started a private embedded broker.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanEnv, run, Server, sleep } from "./proc.js";

interface Jsz {
  account_details?: { stream_detail?: { name: string; state: { messages: number } }[] }[];
}

const APP = `import { createSync } from "@tidemark/server";
const sync = createSync(); // no broker options: the environment decides
const receipt = await sync.topic({ id: "external.env" }).publish({ data: { n: 1 }, tenantId: "acme" });
console.log(JSON.stringify({ sequence: receipt.streamSequence }));
await sync.close();
`;

/** Runs the check in `dir` (the scratch app with the tarballs installed); `ports` are free. */
export async function checkExternalNats(root: string, app: string, dir: string, ports: { client: number; monitor: number }): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, "data");
  mkdirSync(dataDir);
  // The installed package's own search, loaded from the scratch app: a static import of the
  // workspace package would need its dist before the check has built it (a clean clone has none).
  const installed = pathToFileURL(join(app, "node_modules/@tidemark/server/dist/index.js")).href;
  const { findNatsServer } = (await import(installed)) as typeof import("@tidemark/server");
  const nats = Server.start(findNatsServer(process.env, { toolsDirs: [root] }), ["-a", "127.0.0.1", "-p", String(ports.client), "-m", String(ports.monitor), "-js", "-sd", join(dir, "store")], dir, cleanEnv());
  try {
    const monitor = `http://127.0.0.1:${ports.monitor}`;
    for (let tries = 0; !(await fetch(`${monitor}/healthz?js-enabled-only=true`).then((r) => r.ok, () => false)); tries++) {
      if (tries > 100) throw new Error(`the external nats-server did not become ready:\n${nats.log.slice(-2000)}`);
      await sleep(100);
    }
    writeFileSync(join(app, "external.mjs"), APP);
    const url = `nats://127.0.0.1:${ports.client}`;
    const out = await run(process.execPath, ["external.mjs"], app, cleanEnv({ TIDEMARK_NATS_URL: url, TIDEMARK_DATA_DIR: dataDir }));
    const lines = out.split("\n");
    const said = lines.filter((l) => l.includes("uses NATS at"));
    if (said.length !== 1 || !said[0]!.includes(url) || !said[0]!.includes("TIDEMARK_NATS_URL")) {
      throw new Error(`createSync() with TIDEMARK_NATS_URL=${url} did not say once which broker it uses:\n${out}`);
    }
    const jsz = (await (await fetch(`${monitor}/jsz?accounts=true&streams=true`)).json()) as Jsz;
    const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
    // The topic's event stream (TMEV_…), not its dead-letter stream (TMDL_…): /jsz lists both, in no set order.
    const stream = streams.find((s) => s.name.startsWith("TMEV_") && s.name.includes("external"));
    if (!stream || stream.state.messages !== 1) throw new Error(`the external nats-server holds no topic stream with the event: ${JSON.stringify(streams)}`);
    const written = readdirSync(dataDir);
    if (written.length > 0) throw new Error(`an embedded broker wrote to TIDEMARK_DATA_DIR: ${written.join(", ")}`);
    return `createSync() with TIDEMARK_NATS_URL: the event is on that server (stream ${stream.name}), nothing embedded, one line says so`;
  } finally {
    await nats.stop();
  }
}
