/**
 * A throwaway nats-server for a benchmark: the embedded manager (JetStream, loopback, free
 * ports) in a temp directory that is removed on dispose. Use with `await using`.
 * @example await using nats = await startBenchNats();
 *          const nc = await connect({ servers: nats.url });
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedNats, type EmbeddedNats, type EmbeddedNatsOptions } from "@tidemark/server";

/**
 * Starts nats-server 2.x with JetStream in a fresh temp dir; `[Symbol.asyncDispose]` stops it and
 * removes the dir. Durability "buffered" unless asked: the benchmarks measure the client, the
 * hubs and the bridge, not the disk's fsync rate (core.bench.ts measures fsync on its own).
 */
export async function startBenchNats(options: EmbeddedNatsOptions = {}): Promise<EmbeddedNats> {
  const dataDir = mkdtempSync(join(tmpdir(), "tidemark-bench-"));
  const server = await startEmbeddedNats({ websocket: false, maxFileStore: 4 * 1024 ** 3, credentials: false, durability: "buffered", ...options, dataDir });
  console.log(`nats-server ${server.version} (${server.binary}), durability ${server.durability}`);
  const dispose = async () => {
    await server.stop(2_000);
    rmSync(dataDir, { recursive: true, force: true });
  };
  return Object.assign(server, { [Symbol.asyncDispose]: dispose });
}
