/**
 * Test harness in the style of nats.js's `nst` launcher: a real nats-server per suite on free
 * loopback ports, JetStream in a temp directory, removed on dispose. Usable with `await using`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedNats, type EmbeddedNats, type EmbeddedNatsOptions } from "@tidemark/server";

export interface TestNats extends EmbeddedNats {
  /** Stops the server and removes its directory. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a throwaway nats-server with JetStream, WebSocket and monitoring listeners. The binary
 * is the embedded manager's own choice (TIDEMARK_NATS_SERVER, .tools/bin, PATH, /usr/sbin), so
 * the suites run on the server `TIDEMARK_NATS_SERVER` names. No credentials (suites connect raw
 * to look at the broker); the embedded suites test the credentials of the real default.
 */
export async function startTestNats(options: EmbeddedNatsOptions = {}): Promise<TestNats> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "tidemark-nats-"));
  const server = await startEmbeddedNats({ monitoring: true, maxFileStore: 2 * 1024 ** 3, credentials: false, ...options, dataDir });
  const dispose = async () => {
    await server.stop(2_000);
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  return Object.assign(server, { [Symbol.asyncDispose]: dispose }) as TestNats;
}

/** Fetches a monitoring endpoint (e.g. `/jsz?consumers=true`) as JSON. */
export async function monitor<T = unknown>(server: EmbeddedNats, path: string): Promise<T> {
  if (!server.monitorUrl) throw new Error("monitoring is off for this server");
  const res = await fetch(new URL(path, server.monitorUrl));
  return (await res.json()) as T;
}

let counter = 0;
/** A namespace unique within the test run, so suites sharing a server never collide. */
export function uniqueNamespace(prefix = "t"): string {
  return `${prefix}${process.pid.toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
