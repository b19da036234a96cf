/**
 * The two sides of the scale-out benchmark, each as B server processes on loopback: Tidemark's
 * `tidemark serve` bridges (started as operators start them, each on a port of its own, so a
 * killed one comes back on the same address), and the raw baseline, fan-out's plain `ws` server
 * fanning core-NATS messages to sockets (bench/fanout/server.ts), one process per "bridge".
 */
import { freePorts, startBridgeProcess, writeBridgeConfig, type BridgeProcess } from "@tidemark/testing";
import { start, type Proc } from "../fanout/procs.js";

/** SCALEOUT_BUILT=1: bridges run the server package's build (`pnpm -r build` first), as an installed package runs, instead of the source under tsx. */
const BUILT = process.env.SCALEOUT_BUILT === "1";

/**
 * SCALEOUT_UWS=<module>: bridges serve WebSockets with uWebSockets.js (`tidemark serve --uws`,
 * e.g. @trufflesuite/uws-js-unofficial on Node 20) instead of `ws`.
 */
const UWS = process.env.SCALEOUT_UWS ? ["--uws", process.env.SCALEOUT_UWS] : [];

/**
 * SCALEOUT_PROFILE_DIR=dir: every bridge runs under `node --cpu-prof` into that directory, and
 * `close()` stops it with SIGTERM (a profile is written at exit, so a bridge killed -9 by a fault
 * leaves none; its restarted successor does).
 */
const PROFILE = process.env.SCALEOUT_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.SCALEOUT_PROFILE_DIR}`] : [];

/**
 * SCALEOUT_NODE_ARGS="--flag ...": more node flags for every bridge (e.g. V8's
 * `--max-semi-space-size=<MiB>`, to see how much of the memory per user is the young
 * generation each process grows once, not the users' state); a diagnosis.
 */
const NODE_ARGS = (process.env.SCALEOUT_NODE_ARGS ?? "").split(" ").filter(Boolean);
const FLAGS = [...NODE_ARGS, ...PROFILE];

/** B `tidemark serve` processes; `restart(i)` starts bridge i again on its port. */
export class BridgeFleet {
  readonly procs: BridgeProcess[];
  readonly #args: (port: number) => string[];
  readonly #ports: number[];

  private constructor(procs: BridgeProcess[], ports: number[], args: (port: number) => string[]) {
    this.procs = procs;
    this.#ports = ports;
    this.#args = args;
  }

  static async start(count: number, dir: string, configSource: string, natsUrls: string): Promise<BridgeFleet> {
    const config = writeBridgeConfig(dir, configSource);
    const ports = await freePorts(count);
    const args = (port: number) => ["--nats", natsUrls, "--config", config, "--port", String(port), ...UWS];
    const procs = await Promise.all(ports.map((p) => startBridgeProcess(args(p), {}, FLAGS, BUILT)));
    return new BridgeFleet(procs, ports, args);
  }

  get urls(): string[] {
    return this.procs.map((b) => b.wsUrl);
  }

  get pids(): number[] {
    return this.procs.map((b) => b.pid);
  }

  /** Starts bridge i again on its port (under `node --cpu-prof` with SCALEOUT_PROFILE_DIR set, as at start). */
  async restart(i: number): Promise<void> {
    this.procs[i] = await startBridgeProcess(this.#args(this.#ports[i]!), {}, FLAGS, BUILT);
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((b) => (PROFILE.length > 0 ? b.stop() : b.kill())));
  }
}

/** B raw `ws` servers, each subscribed to `bench.fanout.>` on core NATS. */
export async function startWsServers(count: number, natsUrl: string): Promise<{ procs: Proc[]; urls: string[]; pids: number[]; close(): Promise<void> }> {
  const procs = Array.from({ length: count }, () => start("./server.ts", ["ws", natsUrl], ["--expose-gc"]));
  const ports = await Promise.all(procs.map(async (p) => (await p.wait<{ port: number }>("ready")).port));
  return {
    procs,
    urls: ports.map((port) => `ws://127.0.0.1:${port}/`),
    pids: procs.map((p) => p.child.pid!),
    async close() {
      await Promise.all(procs.map((p) => p.ask({ cmd: "stop" }, "stopped").catch(() => p.child.kill("SIGKILL"))));
    },
  };
}
