/**
 * The issue-24 scenario at the default limits (the figures in docs/reliability.md): silent
 * sockets from six loopback addresses keep the 1,000-socket pre-auth cap full while a valid
 * client tries to get in and receive an event, once every 250 ms for 20 s. Not part of the suite:
 *   node --conditions=@tidemark/source --import tsx packages/server/test/hostile/crowd-figures.ts
 * The bridge runs in a child process, with its default limits; RSS read from /proc.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { createNodeBridge, createSync, serveBridge } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";
import { TestClient } from "../bridge/client.js";

const SECONDS = Number(process.env.SECONDS ?? 20);
const ADDRESSES = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"];
/** Per address: the default per-address cap, so that six addresses ask for 1,200 places. */
const PER_ADDRESS = 200;

async function child(natsUrl: string, namespace: string): Promise<void> {
  const sync = createSync({ namespace, nats: { servers: natsUrl } });
  const topic = sync.topic({ id: "notes" });
  const bridge = createNodeBridge({
    sync,
    topics: [{ topic, authorize: () => true }],
    authenticate: (token) => (token === "valid" ? { id: "valid" } : undefined),
    logger: () => undefined,
  });
  const server = await serveBridge(bridge, { port: 0 });
  process.stdout.write(`${server.port}\n`);
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

async function main(): Promise<void> {
  if (process.argv[2] === "child") return child(process.argv[3]!, process.argv[4]!);
  await using nats = await startTestNats();
  const namespace = uniqueNamespace();
  const proc = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", "tsx", fileURLToPath(import.meta.url), "child", nats.url, namespace], { stdio: ["ignore", "pipe", "inherit"] });
  const port = Number(await new Promise<string>((resolve) => proc.stdout.once("data", (d) => resolve(String(d).trim()))));
  const url = `ws://127.0.0.1:${port}/ws`;
  const sync = createSync({ namespace, nats: { servers: nats.url } });
  const topic = sync.topic<{ n: number }>({ id: "notes" });
  const before = rssMiB(proc.pid!);

  // The neighbour: 200 silent sockets per address, topped up every second.
  const held = new Map(ADDRESSES.map((a) => [a, new Set<WebSocket>()]));
  const neighbour = { tried: 0, refused: 0, closedBy: {} as Record<number, number> };
  const topUp = () => {
    for (const [localAddress, sockets] of held) {
      while (sockets.size < PER_ADDRESS) {
        neighbour.tried++;
        const ws = new WebSocket(url, { localAddress });
        sockets.add(ws);
        ws.on("error", () => undefined);
        ws.on("unexpected-response", (_req, res) => (neighbour.refused++, res.resume(), sockets.delete(ws)));
        ws.on("close", (code) => ((neighbour.closedBy[code] = (neighbour.closedBy[code] ?? 0) + 1), sockets.delete(ws)));
      }
    }
  };
  topUp();
  const timer = setInterval(topUp, 1_000);
  const gauge = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return Number(text.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ")[1]);
  };
  while ((await gauge("tidemark_bridge_unauthenticated_connections")) < 1_000) await new Promise((r) => setTimeout(r, 100));

  const valid = { attempts: 0, admitted: 0, failures: [] as string[] };
  let peak = before;
  let waitingMin = Number.POSITIVE_INFINITY;
  let waitingMax = 0;
  const started = Date.now();
  for (let n = 0; Date.now() - started < SECONDS * 1_000; n++) {
    const waiting = await gauge("tidemark_bridge_unauthenticated_connections");
    waitingMin = Math.min(waitingMin, waiting);
    waitingMax = Math.max(waitingMax, waiting);
    valid.attempts++;
    try {
      const receipt = await topic.publish({ data: { n } });
      const client = await TestClient.connect(url, "valid");
      const { hub } = await client.subscribe({ id: "s", topic: "notes", cursor: topic.cursorAt(receipt.streamSequence - 1) });
      const [event] = await client.events(String(hub), 1, 10_000);
      if ((event!.event as { data: { n: number } }).data.n !== n) throw new Error("wrong event");
      client.ws.terminate();
      valid.admitted++;
    } catch (err) {
      valid.failures.push(String(err));
    }
    peak = Math.max(peak, rssMiB(proc.pid!));
    await new Promise((r) => setTimeout(r, 250));
  }
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  clearInterval(timer);
  for (const sockets of held.values()) for (const ws of sockets) ws.terminate();
  console.log(
    JSON.stringify({
      seconds: SECONDS,
      valid,
      waitingAtAttempts: [waitingMin, waitingMax],
      neighbour,
      rejected: metrics.split("\n").filter((l) => l.startsWith("tidemark_bridge_rejected_total{")),
      rssBeforeMiB: before,
      rssPeakMiB: peak,
    }),
  );
  await sync.close();
  proc.kill();
}

await main();
