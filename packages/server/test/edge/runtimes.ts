/**
 * The runtimes of the edge suites: each serves the bridge of `app/options.ts` against a real
 * nats-server (Node over TCP in this process; Deno, Bun and workerd over the server's WebSocket
 * listener in a child process) and returns its WebSocket URL. The runtime-neutral apps are
 * bundled with esbuild (condition `@tidemark/source`, platform neutral) and run as plain ESM.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { loadTestUws } from "@tidemark/testing";
import { createNodeBridge, createSync, serveBridge, serveBridgeUws, type Sync } from "../../src/index.js";
import { bridgeOptions } from "./app/options.js";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../../../../package.json"));

export interface RuntimeContext {
  /** Extra text bindings (workerd) or environment variables (Deno, Bun). */
  env?: Record<string, string>;
  /** `nats://` URL (Node) */
  natsUrl: string;
  /** `ws://` URL of the nats-server's WebSocket listener (every other runtime) */
  natsWsUrl: string;
  namespace: string;
}

export interface RunningBridge {
  /** `ws://127.0.0.1:port/ws` */
  wsUrl: string;
  /** `http://127.0.0.1:port` */
  httpUrl: string;
  close(): Promise<void>;
}

export interface Runtime {
  name: "node" | "uws" | "deno" | "bun" | "workerd";
  start(ctx: RuntimeContext): Promise<RunningBridge>;
}

/**
 * Path of a binary shipped inside an npm platform package (no postinstall needed): `pkg` is an
 * optional dependency of the `wrapper` package (a root dev dependency), resolved from it.
 */
export function platformBinary(wrapper: string, pkg: string, file: string): string {
  const fromWrapper = createRequire(require.resolve(`${wrapper}/package.json`));
  return join(dirname(fromWrapper.resolve(`${pkg}/package.json`)), file);
}

/** Bundles a runtime-neutral app for a non-Node runtime. */
export async function bundle(entry: string, outDir: string): Promise<string> {
  const outfile = join(outDir, "app.mjs");
  await build({
    entryPoints: [join(here, entry)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["@tidemark/source"],
    mainFields: ["module", "main"],
    // hono/deno and hono/bun import node:path for serveStatic (unused here; both runtimes have
    // it); tweetnacl (nkeys) falls back to require("crypto") only where `self.crypto` is missing.
    external: ["node:*", "crypto"],
    logLevel: "error",
  });
  return outfile;
}

/** Starts a child and resolves with the first `{"port":N}` line it prints. */
function startChild(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no port line within 60 s`)), 60_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")}: ${err.message}\n${output.slice(-3000)}`));
    };
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const m = /\{"port":(\d+)\}/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    if (process.env.TIDEMARK_EDGE_DEBUG) {
      child.stdout!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
      child.stderr!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    }
    child.once("exit", (code, signal) => fail(new Error(`exited (${code ?? signal}) before listening`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(timer);
}

function running(port: number, close: () => Promise<void>): RunningBridge {
  return { wsUrl: `ws://127.0.0.1:${port}/ws`, httpUrl: `http://127.0.0.1:${port}`, close };
}

export const nodeRuntime: Runtime = {
  name: "node",
  async start(ctx) {
    const sync: Sync = createSync({ nats: { servers: ctx.natsUrl }, namespace: ctx.namespace });
    const bridge = createNodeBridge(bridgeOptions(sync));
    const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
    return running(server.port, async () => {
      await server.close();
      await sync.close();
    });
  },
};

/** Node with the bridge served by uWebSockets.js instead of `ws`. */
export const uwsRuntime: Runtime = {
  name: "uws",
  async start(ctx) {
    const sync: Sync = createSync({ nats: { servers: ctx.natsUrl }, namespace: ctx.namespace });
    const bridge = createNodeBridge(bridgeOptions(sync));
    const server = await serveBridgeUws(bridge, { uws: loadTestUws(), port: 0, drainGraceMs: 100 });
    return running(server.port, async () => {
      await server.close();
      await sync.close();
    });
  },
};

export const denoRuntime: Runtime = {
  name: "deno",
  async start(ctx) {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-deno-"));
    const file = await bundle("app/deno.ts", dir);
    const deno = platformBinary("deno", "@deno/linux-x64-glibc", "deno");
    const { child, port } = await startChild(
      deno,
      ["run", "--quiet", "--no-prompt", "--allow-net", "--allow-env", file],
      { ...ctx.env, NATS_WS_URL: ctx.natsWsUrl, TIDEMARK_NAMESPACE: ctx.namespace, NO_COLOR: "1", DENO_DIR: join(dir, "deno-cache") },
      dir,
    );
    return running(port, async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    });
  },
};

export const bunRuntime: Runtime = {
  name: "bun",
  async start(ctx) {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-bun-"));
    const file = await bundle("app/bun.ts", dir);
    const bun = platformBinary("bun", "@oven/bun-linux-x64", "bin/bun");
    const { child, port } = await startChild(bun, ["run", file], { ...ctx.env, NATS_WS_URL: ctx.natsWsUrl, TIDEMARK_NAMESPACE: ctx.namespace, NO_COLOR: "1" }, dir);
    return running(port, async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    });
  },
};

/** A free loopback port (workerd takes its listen address from the config). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function workerdConfig(port: number, ctx: RuntimeContext): string {
  const text = (s: string) => JSON.stringify(s);
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .bridgeWorker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = ${text(`127.0.0.1:${port}`)}, http = (), service = "main") ],
);
const bridgeWorker :Workerd.Worker = (
  modules = [ (name = "app.mjs", esModule = embed "app.mjs") ],
  compatibilityDate = "2025-01-01",
  bindings = [
    (name = "NATS_WS_URL", text = ${text(ctx.natsWsUrl)}),
    (name = "TIDEMARK_NAMESPACE", text = ${text(ctx.namespace)}),
${Object.entries(ctx.env ?? {})
  .map(([k, v]) => `    (name = ${text(k)}, text = ${text(v)}),\n`)
  .join("")}    (name = "TIDEMARK_BRIDGE", durableObjectNamespace = "TidemarkBridge"),
  ],
  durableObjectNamespaces = [ (className = "TidemarkBridge", uniqueKey = "tidemark-edge-suite") ],
  durableObjectStorage = (inMemory = void),
  globalOutbound = "internet",
);
`;
}

export const workerdRuntime: Runtime = {
  name: "workerd",
  async start(ctx) {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-workerd-"));
    await bundle("app/worker.ts", dir);
    const workerd = platformBinary("workerd", "@cloudflare/workerd-linux-64", "bin/workerd");
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      writeFileSync(join(dir, "config.capnp"), workerdConfig(port, ctx));
      const child = spawn(workerd, ["serve", join(dir, "config.capnp"), "--verbose"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
      child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
      const httpUrl = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 30_000;
      let up = false;
      while (Date.now() < deadline && child.exitCode === null) {
        up = await fetch(`${httpUrl}/healthz`).then((r) => r.ok, () => false);
        if (up) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      if (up) {
        return running(port, async () => {
          await stopChild(child);
          rmSync(dir, { recursive: true, force: true });
        });
      }
      await stopChild(child);
      if (attempt >= 3) throw new Error(`workerd did not serve /healthz:\n${output.slice(-3000)}`);
    }
  },
};
