/**
 * A managed nats-server child: JetStream under a data directory, loopback only, ports chosen by
 * the server and read back from its ports file. The child dies with its parent, even on
 * SIGKILL: it runs under a tiny shell that kills it when the parent's pipe closes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TidemarkError, ErrorCode, InvalidArgumentError } from "@tidemark/shared";
import { featuresOf } from "../broker/features.js";
import type { Durability, EmbeddedNatsOptions } from "../broker/embedded-options.js";
import { findNatsServer, natsServerVersion } from "./binary.js";
import { loadOrCreateCredentials, type NatsCredentials } from "./credentials.js";
import { renderNatsConfig } from "./config.js";
import { stopStaleServer, WATCHDOG_MARK } from "./stale.js";

// Declared in broker/ so the runtime-neutral core can name them; exported here with the server.
export type { Durability, EmbeddedNatsOptions };

/** A running managed server. */
export interface EmbeddedNats {
  /** `nats://127.0.0.1:port` */
  readonly url: string;
  /** `ws://127.0.0.1:port`, when the WebSocket listener is on. */
  readonly wsUrl: string | undefined;
  /** `http://127.0.0.1:port`, when monitoring is on. */
  readonly monitorUrl: string | undefined;
  readonly port: number;
  readonly pid: number;
  readonly dataDir: string;
  readonly maxFileStore: number;
  /** The binary that runs and the version it reports. */
  readonly binary: string;
  readonly version: string;
  /** The durability in force (see {@link EmbeddedNatsOptions.durability}). */
  readonly durability: Durability;
  /** What clients log in with; undefined when `credentials: false`. */
  readonly credentials: NatsCredentials | undefined;
  /** Last lines the server logged (for error messages). */
  logs(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (fault injection). */
  kill(): Promise<void>;
  /** Resolves when the process exits, for whatever reason. */
  readonly exited: Promise<number | null>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The server process failed to start or exited early. */
export class EmbeddedNatsError extends TidemarkError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.BrokerUnavailable, message, options);
    this.name = "EmbeddedNatsError";
  }
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
// Runs nats-server in the background and kills it when stdin reaches EOF, i.e. when the parent
// exits for any reason (a SIGKILLed parent cannot run cleanup code of its own). The shell
// itself waits for nats-server, so it exits (and `exited` resolves) when nats-server dies on
// its own too: a failed start is seen at once. The stdin reader runs in the background on fd 3
// (a background job's own stdin is /dev/null) and is stopped when nats-server is gone.
const WATCHDOG =
  `trap "" INT; ${WATCHDOG_MARK}; ` + '"$0" -c "$1" 3<&- & c=$!; (cat <&3 >/dev/null; kill $c 2>/dev/null) & w=$!; ' +
  'exec 3<&-; wait $c; s=$?; kill $w 2>/dev/null; exit $s';

/** Starts a managed nats-server. */
export async function startEmbeddedNats(options: EmbeddedNatsOptions = {}): Promise<EmbeddedNats> {
  const dataDir = resolve(options.dataDir ?? process.env.TIDEMARK_DATA_DIR ?? ".tidemark");
  const natsDir = `${dataDir}/nats`;
  try {
    mkdirSync(natsDir, { recursive: true, mode: 0o700 });
    chmodSync(natsDir, 0o700); // the store, config and credentials are the owner's alone
    writeFileSync(`${natsDir}/.write-check`, "");
    rmSync(`${natsDir}/.write-check`);
  } catch (cause) {
    throw new EmbeddedNatsError(
      `the data directory ${dataDir} cannot hold the embedded NATS store (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}): ` +
        `choose a writable directory with TIDEMARK_DATA_DIR or --data`,
      { cause },
    );
  }
  await stopStaleServer(natsDir);
  for (const f of readdirSync(natsDir)) if (f.endsWith(".ports")) rmSync(`${natsDir}/${f}`, { force: true });

  const binary = options.binary ?? findNatsServer();
  const version = natsServerVersion(binary);
  const durability = chooseDurability(options.durability, version, binary);
  const credentials = options.credentials === false ? undefined : loadOrCreateCredentials(natsDir);
  const maxFileStore = options.maxFileStore ?? 8 * GiB;
  const websocket = options.websocket ?? true;
  const monitoring = options.monitoring ?? false;
  const config = renderNatsConfig({
    dir: natsDir,
    maxFileStore,
    maxMemoryStore: options.maxMemoryStore ?? 256 * MiB,
    maxPayload: options.maxPayload ?? 8 * MiB,
    websocket,
    monitoring,
    serverName: options.serverName,
    cluster: options.cluster,
    port: options.port,
    auth: credentials,
    syncAlways: durability === "fsync",
  });
  const configPath = `${natsDir}/nats.conf`;
  writeFileSync(configPath, config, { mode: 0o600 });
  chmodSync(configPath, 0o600); // it holds the password; an older file may be wider

  // detached: a process group of its own, so a signal to the parent's group (Ctrl-C, `timeout`,
  // `kill -TERM -PGID`) reaches only the parent, which drains on a live broker and then stops it.
  // The stdin pipe still ends it with the parent. (A cgroup-wide kill, systemd's default
  // KillMode, reaches it anyway: docs/deployment.md asks for KillMode=mixed.)
  const child = spawn("/bin/sh", ["-c", WATCHDOG, binary, configPath], {
    stdio: ["pipe", "ignore", "pipe"],
    detached: true,
  });
  const tail: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    tail.push(...chunk.split("\n").filter(Boolean));
    if (tail.length > 200) tail.splice(0, tail.length - 200);
  });
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
    child.stdin!.end(); // lets the watchdog's stdin reader finish
  });
  const logs = () => tail.join("\n");

  try {
    const ports = await waitForPorts(natsDir, child, () => gone, options.startTimeoutMs ?? 15_000, logs);
    const url = ports.nats[0]!;
    const pid = Number.parseInt(readFileSync(`${natsDir}/nats-server.pid`, "utf8").trim(), 10);
    return handle(child, exited, () => gone, logs, {
      url,
      wsUrl: ports.websocket?.[0],
      monitorUrl: ports.monitoring?.[0],
      port: Number(new URL(url).port),
      pid,
      dataDir,
      maxFileStore,
      binary,
      version,
      durability,
      credentials,
    });
  } catch (err) {
    child.stdin!.end();
    // The whole group (detached: the watchdog's own), at once: a nats-server stuck restoring a
    // damaged store grows fast (10 GB in two minutes on 2.15.1), and its exit on the watchdog's
    // SIGTERM then took tens of seconds (docs/reliability.md).
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
    throw err;
  }
}

function chooseDurability(wanted: Durability | undefined, version: string, binary: string): Durability {
  const supported = featuresOf(version).syncAlways;
  if (wanted === "fsync" && !supported) {
    throw new InvalidArgumentError(
      `durability "fsync" needs nats-server 2.10 or newer (sync_interval: always); ${binary} is ${version}. ` +
        `Install a newer one (scripts/install.sh) or choose durability "buffered".`,
    );
  }
  return wanted ?? (supported ? "fsync" : "buffered");
}

interface PortsFile { nats: string[]; websocket?: string[]; monitoring?: string[] }

async function waitForPorts(
  dir: string,
  child: ChildProcess,
  gone: () => boolean,
  timeoutMs: number,
  logs: () => string,
): Promise<PortsFile> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone()) throw new EmbeddedNatsError(`nats-server exited during start:\n${logs()}`);
    const file = readdirSync(dir).find((f) => f.endsWith(".ports"));
    if (file) {
      try {
        const ports = JSON.parse(readFileSync(`${dir}/${file}`, "utf8")) as PortsFile;
        if (ports.nats?.length) return normalise(ports);
      } catch {
        // written but not complete yet
      }
    }
    await sleep(25);
  }
  void child;
  throw new EmbeddedNatsError(`nats-server did not report its ports within ${timeoutMs} ms:\n${logs()}`);
}

// The ports file lists every interface address; keep loopback ones and write ws:// explicitly.
function normalise(p: PortsFile): PortsFile {
  const pick = (list: string[] | undefined) => list?.filter((u) => u.includes("127.0.0.1")).concat(list ?? []);
  return {
    nats: pick(p.nats)!,
    websocket: pick(p.websocket)?.map((u) => u.replace(/^http/, "ws")),
    monitoring: pick(p.monitoring),
  };
}

function handle(
  child: ChildProcess,
  exited: Promise<number | null>,
  gone: () => boolean,
  logs: () => string,
  info: Omit<EmbeddedNats, "logs" | "stop" | "kill" | "exited" | typeof Symbol.asyncDispose>,
): EmbeddedNats {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(info.pid, sig);
    } catch {
      // already gone
    }
  };
  const stop = async (graceMs = 10_000) => {
    if (gone()) return;
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), graceMs);
    child.stdin!.end();
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    if (gone()) return;
    signal("SIGKILL");
    child.stdin!.end();
    await exited;
  };
  return { ...info, logs, stop, kill, exited, [Symbol.asyncDispose]: () => stop() };
}
