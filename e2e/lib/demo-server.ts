/**
 * Starts the demo server (apps/demo/server/main.ts) as a child process on a free loopback port
 * with a temp data dir. It can be killed with SIGKILL and started again in place: same port,
 * same data dir, so the browser's reconnect finds it and the stored events are still there.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The most events the demo's publish route takes per request. */
export const MAX_PUBLISH_COUNT = 100;

export const demoDir = fileURLToPath(new URL("../../apps/demo/", import.meta.url));

export interface DemoServerOptions {
  /** Extra environment, e.g. `DEMO_RETENTION_BYTES`. */
  env?: Record<string, string>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export class DemoServer {
  private child: ChildProcess | undefined;
  private output = "";

  private constructor(
    readonly port: number,
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  static async start(options: DemoServerOptions = {}): Promise<DemoServer> {
    // The port is probed free here and bound later by the child, which starts its embedded
    // nats-server first: that server may be handed the same port meanwhile (seen once in CI,
    // EADDRINUSE on the demo's own listen). Such a start is retried on another port.
    for (let attempt = 1; ; attempt++) {
      const server = new DemoServer(await freePort(), mkdtempSync(join(tmpdir(), "tidemark-e2e-")), options.env ?? {});
      try {
        await server.launch();
        return server;
      } catch (err) {
        await server.dispose().catch(() => undefined);
        if (attempt >= 3 || !String(err).includes("EADDRINUSE")) throw err;
      }
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process and waits until it answers. */
  async launch(): Promise<void> {
    this.output = "";
    // One process (tsx as a loader, not its CLI wrapper): SIGKILL must hit the server itself.
    const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", "tsx", "server/main.ts"], {
      cwd: demoDir,
      env: { ...process.env, ...this.env, PORT: String(this.port), TIDEMARK_DATA_DIR: this.dataDir },
      stdio: ["ignore", "pipe", "pipe"],
      detached: false,
    });
    this.child = child;
    child.stdout?.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (this.output += d.toString()));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`demo server exited (${child.exitCode}):\n${this.output}`);
      try {
        const res = await fetch(`${this.url}/api/stats`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`demo server did not start in 30 s:\n${this.output}`);
  }

  /** SIGKILL, no goodbye: sockets drop, the embedded nats-server is left for the next start to reap. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || !running(child)) return;
    const exited = new Promise((r) => child.once("exit", r));
    signal(child, "SIGKILL");
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && running(child)) {
      const exited = new Promise((r) => child.once("exit", r));
      signal(child, "SIGTERM");
      const timer = setTimeout(() => signal(child, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  }

  /** Deletes the stored events (server stopped): the next launch starts a new incarnation. */
  wipe(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  async dispose(): Promise<void> {
    await this.stop();
    // After a kill -9 without a restart, the embedded nats-server is still running: reap it.
    try {
      const pid = Number.parseInt(readFileSync(join(this.dataDir, "nats-server.pid"), "utf8"), 10);
      if (pid > 1 && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("nats-server")) process.kill(pid, "SIGKILL");
    } catch {
      // no pid file, or already gone
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  get logs(): string {
    return this.output;
  }

  /** The server's own count of open WebSocket connections. */
  async connections(): Promise<number> {
    const res = await fetch(`${this.url}/api/stats`);
    return ((await res.json()) as { connections: number }).connections;
  }

  /** The bridge's Prometheus metrics, by series (`name{labels}`); absent series read as 0. */
  async metrics(): Promise<(series: string) => number> {
    const text = await (await fetch(`${this.url}/metrics`)).text();
    const values = new Map<string, number>();
    for (const line of text.split("\n")) {
      if (line.startsWith("#") || !line.trim()) continue;
      const at = line.lastIndexOf(" ");
      values.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
    return (series) => values.get(series) ?? 0;
  }

  /** Tokens the server handed out via /api/token. */
  async tokens(): Promise<number> {
    const res = await fetch(`${this.url}/api/stats`);
    return ((await res.json()) as { tokens: number }).tokens;
  }

  /** Event ids the broker retains for the tenant, in stream order. */
  /** Event ids the broker retains for a tenant, read as `user` (default ada). */
  async retainedIds(tenantId: string, user = "ada"): Promise<string[]> {
    const res = await fetch(`${this.url}/api/events?tenantId=${encodeURIComponent(tenantId)}`, { headers: { cookie: `demo_user=${user}` } });
    return ((await res.json()) as { ids: string[] }).ids;
  }

  /** A token for a demo user (default ada) from the demo's login (not counted by `tokens()`). */
  async login(user = "ada"): Promise<string> {
    const res = await fetch(`${this.url}/api/login`, {
      method: "POST",
      headers: { origin: this.url, "content-type": "application/json" },
      body: JSON.stringify({ user }),
    });
    if (!res.ok) throw new Error(`login: HTTP ${res.status}`);
    return ((await res.json()) as { token: string }).token;
  }

  /** A raw POST /api/publish, as the page sends it unless `init` says otherwise (the guard tests). */
  async publishRequest(body: unknown, init: { token?: string | null; origin?: string | null; contentType?: string } = {}): Promise<Response> {
    const token = init.token === undefined ? await this.login() : init.token;
    const origin = init.origin === undefined ? this.url : init.origin;
    const headers: Record<string, string> = { "content-type": init.contentType ?? "application/json" };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (origin !== null) headers.origin = origin;
    return fetch(`${this.url}/api/publish`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  }

  /**
   * Publishes `count` events through the demo's route, as its page does (own origin, the
   * user's token, JSON), in requests of at most MAX_PUBLISH_COUNT. Stops at the first refusal.
   */
  async publish(tenantId: string, text: string, count = 1, user = "ada"): Promise<{ status: number; body: unknown }> {
    const token = await this.login(user);
    let result: { status: number; body: unknown } = { status: 200, body: undefined };
    for (let done = 0; done < count && result.status === 200; done += MAX_PUBLISH_COUNT) {
      const n = Math.min(MAX_PUBLISH_COUNT, count - done);
      const res = await this.publishRequest({ tenantId, text, ...(count > 1 ? { count: n } : {}) }, { token });
      result = { status: res.status, body: await res.json() };
    }
    return result;
  }
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(child.pid, name);
  } catch {
    // already gone
  }
}
