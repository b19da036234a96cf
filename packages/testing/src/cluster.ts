/**
 * Test harness for scale-out: a 3-node JetStream cluster of Debian's nats-server on loopback
 * (`cluster { routes }`, each node its own store and server_name, client and route ports chosen
 * up front so a node restarts in place), and `tidemark serve --nats` bridge processes on it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startEmbeddedNats, type EmbeddedNats } from "@tidemark/server";
import { RouteMesh } from "./mesh.js";

/** Ports the kernel hands out now (closed again, so there is a small race; good enough on loopback). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<import("node:net").Server>((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** Polls `check` until it returns a value other than `undefined`/`false`; throws naming `what`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(stepMs);
  }
}

export interface ClusterNode {
  readonly name: string;
  readonly clientPort: number;
  readonly clusterPort: number;
  readonly dataDir: string;
  /** `nats://127.0.0.1:clientPort` (stable across restarts). */
  readonly url: string;
  /** The running server, or `undefined` while the node is down. */
  server: EmbeddedNats | undefined;
}

export interface TestCluster {
  readonly name: string;
  readonly nodes: ClusterNode[];
  /** Every node's client URL, comma-separated (what `--nats` takes). */
  readonly urls: string;
  /** kill -9 of one node; its store stays. */
  kill(index: number): Promise<void>;
  /** Graceful stop of one node. */
  stop(index: number): Promise<void>;
  /** Starts a stopped node again on the same ports and store. */
  start(index: number): Promise<void>;
  /**
   * Adds a new node (new name, ports and empty store) routed to every other node; resolves to
   * its index once it runs. Clients learn of it from the cluster's INFO gossip.
   */
  add(): Promise<number>;
  /** The proxies every route goes through (`startTestCluster({ proxiedRoutes: true })`). */
  readonly mesh: RouteMesh | undefined;
  /** Waits until every running node agrees on a JetStream meta leader and answers the JetStream API. */
  ready(options?: { timeoutMs?: number }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number; replicas?: { name: string; current?: boolean; offline?: boolean }[] };
}

/**
 * Starts a JetStream cluster of `size` nodes and waits for a meta leader. `proxiedRoutes`: every
 * route goes through a fault proxy (`cluster.mesh`): the nodes advertise the mesh's sink as their
 * route address (no direct route by gossip) and no client URLs (`cluster { no_advertise }`), so
 * clients keep to the URLs they were given.
 */
export async function startTestCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  // The ports are free when picked and bound a moment later: a suite running beside this one
  // may take one meanwhile (seen in CI: "bind: address already in use"). Fresh ports, again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTestClusterOnce(options);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/i.test(String((err as Error).message))) throw err;
    }
  }
}

interface ClusterOptions {
  size?: number;
  maxFileStore?: number;
  proxiedRoutes?: boolean;
}

async function startTestClusterOnce(options: ClusterOptions): Promise<TestCluster> {
  const size = options.size ?? 3;
  const root = mkdtempSync(join(tmpdir(), "tidemark-cluster-"));
  const ports = await freePorts(size * 2);
  const name = `tm${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const nodes: ClusterNode[] = Array.from({ length: size }, (_, i) => ({
    name: `${name}-n${i}`,
    clientPort: ports[i]!,
    clusterPort: ports[size + i]!,
    dataDir: join(root, `n${i}`),
    url: `nats://127.0.0.1:${ports[i]}`,
    server: undefined,
  }));
  const mesh = options.proxiedRoutes ? await RouteMesh.start(nodes.map((n) => n.clusterPort)) : undefined;
  const startNode = async (i: number) => {
    const node = nodes[i]!;
    if (node.server) return;
    mkdirSync(node.dataDir, { recursive: true });
    node.server = await startEmbeddedNats({
      dataDir: node.dataDir,
      serverName: node.name,
      port: node.clientPort,
      cluster: {
        name,
        port: node.clusterPort,
        routes: mesh ? mesh.routesOf(i) : nodes.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.clusterPort}`),
        noAdvertise: !!mesh,
        advertise: mesh?.advertise,
      },
      monitoring: true,
      websocket: false,
      maxFileStore: options.maxFileStore ?? 1024 ** 3,
      startTimeoutMs: 20_000,
      credentials: false, // an external cluster in the tests: bridges connect with --nats URLs only
    });
  };
  const cluster: TestCluster = {
    name,
    nodes,
    mesh,
    urls: nodes.map((n) => n.url).join(","),
    async kill(i) {
      await nodes[i]!.server?.kill();
      nodes[i]!.server = undefined;
    },
    async stop(i) {
      await nodes[i]!.server?.stop(5_000);
      nodes[i]!.server = undefined;
    },
    start: startNode,
    async add() {
      if (mesh) throw new Error("add() is not supported with proxiedRoutes");
      const [clientPort, clusterPort] = await freePorts(2);
      const i = nodes.length;
      nodes.push({
        name: `${name}-n${i}`,
        clientPort: clientPort!,
        clusterPort: clusterPort!,
        dataDir: join(root, `n${i}`),
        url: `nats://127.0.0.1:${clientPort}`,
        server: undefined,
      });
      await startNode(i);
      return i;
    },
    async ready({ timeoutMs = 45_000 } = {}) {
      await until(
        "the cluster has a JetStream meta leader every running node agrees on, and it sees every running node current",
        async () => {
          const up = nodes.filter((n) => n.server);
          const views = await Promise.all(up.map(async (n) => ((await (await fetch(new URL("/jsz", n.server!.monitorUrl))).json()) as Jsz).meta_cluster));
          const leader = views[0]?.leader;
          if (!leader || !views.every((v) => v?.leader === leader)) return false;
          // Until then an R3 stream create can fail "no suitable peers for placement, peer offline".
          const replicas = views[up.findIndex((n) => n.name === leader)]?.replicas ?? [];
          return up.every((n) => n.name === leader || replicas.some((r) => r.name === n.name && r.current && !r.offline));
        },
        timeoutMs,
        200,
      );
      // JetStream answers its API on every running node (account info goes through the meta leader).
      for (const n of nodes.filter((x) => x.server)) {
        await until(
          `JetStream answers on ${n.name}`,
          async () => {
            const nc = await connect({ servers: n.url, reconnect: false, timeout: 2_000 });
            try {
              return !!(await (await jetstreamManager(nc, { timeout: 2_000 })).getAccountInfo());
            } finally {
              await nc.close();
            }
          },
          timeoutMs,
          200,
        );
      }
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(nodes.map((n) => n.server?.stop(2_000)));
      for (const n of nodes) n.server = undefined;
      await mesh?.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(nodes.map((_, i) => startNode(i)));
    await cluster.ready();
  } catch (err) {
    await cluster[Symbol.asyncDispose]();
    throw err;
  }
  return cluster;
}

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
// The CLI's source, run by path in a child process (not imported).
const cliMain = fileURLToPath(new URL("../../server/src/cli/main.ts", import.meta.url));
const builtCliMain = fileURLToPath(new URL("../../server/dist/cli/main.js", import.meta.url));

/** A `tidemark serve` child process (node running the CLI source directly: its pid is the bridge's). */
export interface BridgeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:port` */
  readonly url: string;
  /** `ws://127.0.0.1:port/ws` */
  readonly wsUrl: string;
  readonly output: string[];
  readonly exited: Promise<number | null>;
  /** kill -9. */
  kill(): Promise<void>;
  /** SIGTERM (graceful drain) and wait for the exit. */
  stop(): Promise<number | null>;
}

/** Writes a config module for `tidemark serve --config` and returns its path. */
export function writeBridgeConfig(dir: string, source: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `tidemark.config.${Math.random().toString(36).slice(2, 8)}.mjs`);
  writeFileSync(file, source);
  return file;
}

/**
 * Starts `tidemark serve --port 0 ...args`; resolves once it logs "listening". `nodeArgs` go to
 * node before the script (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). From the TypeScript
 * source under tsx, or with `built` from the server package's build (`dist/`, as an installed
 * package runs: tsx adds a few KB of memory per connection).
 */
export function startBridgeProcess(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = [], built = false): Promise<BridgeProcess> {
  const script = built ? [builtCliMain] : ["--conditions=@tidemark/source", "--import", "tsx", cliMain];
  const child = spawn(process.execPath, [...nodeArgs, ...script, "serve", "--port", "0", ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`bridge did not log "listening" in 45 s: ${output.join("").slice(-2000)}`));
    }, 45_000);
    child.stderr!.on("data", (d) => output.push(String(d)));
    let buffered = "";
    child.stdout!.on("data", (d: Buffer) => {
      const text = String(d);
      output.push(text);
      if (output.length > 2000) output.splice(0, output.length - 2000);
      buffered += text;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        const url = (JSON.parse(line) as { url: string }).url;
        resolve({
          child,
          pid: child.pid!,
          url,
          wsUrl: `${url.replace(/^http/, "ws")}/ws`,
          output,
          exited,
          async kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
            await exited;
          },
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`bridge exited with ${code} before listening: ${output.join("").slice(-2000)}`));
    });
  });
}
