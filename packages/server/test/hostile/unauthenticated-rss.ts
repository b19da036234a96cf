/**
 * Measures a bridge process's RSS while 300 sockets that never say hello each send part of a
 * 1 MiB frame (the figures in docs/reliability.md). Not part of the suite:
 *   node --conditions=@tidemark/source --import tsx packages/server/test/hostile/unauthenticated-rss.ts
 * The bridge runs in a child process so that the clients' buffers do not count.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect as tcp, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { createNodeBridge, createSync, serveBridge } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";

const SOCKETS = Number(process.env.SOCKETS ?? 300);

async function child(natsUrl: string): Promise<void> {
  const sync = createSync({ namespace: uniqueNamespace(), nats: { servers: natsUrl } });
  const topic = sync.topic({ id: "notes" });
  const bridge = createNodeBridge({
    sync,
    topics: [{ topic, authorize: () => true }],
    authenticate: () => ({ id: "x" }),
    logger: () => undefined,
    // Every socket admitted, to measure the worst case (the default admits 200 per address).
    limits: { maxUnauthenticatedPerAddress: 1_000 },
  });
  const server = await serveBridge(bridge, { port: 0 });
  process.stdout.write(`${server.port}\n`);
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

async function attack(port: number): Promise<Socket> {
  const socket = tcp({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  socket.on("end", () => socket.destroy());
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once("data", () => resolve()));
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(1024 * 1024), 2);
  socket.write(header);
  socket.write(Buffer.alloc(1024 * 1024 - 1, 0x41)); // all but the last byte
  socket.resume();
  return socket;
}

async function main(): Promise<void> {
  if (process.argv[2] === "child") return child(process.argv[3]!);
  await using nats = await startTestNats();
  const proc = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", "tsx", fileURLToPath(import.meta.url), "child", nats.url], { stdio: ["ignore", "pipe", "inherit"] });
  const port = Number(await new Promise<string>((resolve) => proc.stdout.once("data", (d) => resolve(String(d).trim()))));
  await new Promise((r) => setTimeout(r, 1_000));
  const before = rssMiB(proc.pid!);
  const started = Date.now();
  const sockets = await Promise.all(Array.from({ length: SOCKETS }, () => attack(port)));
  let peak = before;
  const openCount = () => sockets.filter((s) => !s.destroyed).length;
  let open = openCount();
  const samples: string[] = [];
  while (Date.now() - started < 45_000 && open > 0) {
    peak = Math.max(peak, rssMiB(proc.pid!));
    open = openCount();
    const t = Math.round((Date.now() - started) / 1000);
    if (samples.length <= t) {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const gauge = (name: string) => metrics.split("\n").find((l) => l.startsWith(`${name} `))?.split(" ")[1];
      samples.push(`${t}s: ${rssMiB(proc.pid!)} MiB, ${open} open, bridge: ${gauge("tidemark_bridge_connections")} connections, ${gauge("tidemark_bridge_unauthenticated_connections")} unauthenticated`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(JSON.stringify({ sockets: SOCKETS, rssBeforeMiB: before, rssPeakMiB: peak, allClosedAfterMs: open === 0 ? Date.now() - started : null, samples: samples.filter((_, i) => i % 5 === 0) }));
  for (const s of sockets) s.destroy();
  proc.kill();
}

await main();
