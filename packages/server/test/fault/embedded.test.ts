import { describe, it, expect, afterAll } from "vitest";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ErrorCode, createNodeBridge, createSync, serveBridge } from "../../src/index.js";
import { until } from "@tidemark/testing";
import { alive } from "../../src/internal.js";
import { uniqueNamespace } from "@tidemark/testing";
import { Publisher, faultTopicOptions, startSubscribers } from "./fixture.js";
import { tally } from "./subscriber.js";

const dir = mkdtempSync(join(tmpdir(), "tidemark-fault-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe("fault: the embedded nats-server", () => {
  it("fault - the embedded nats-server is killed under a running bridge: it is started again on its port and store, subscribers recover, nothing lost or doubled", async () => {
    const dataDir = join(dir, "restart");
    const sync = createSync({ namespace: uniqueNamespace(), embedded: { dataDir, websocket: false }, requestTimeoutMs: 2_000 });
    const topic = sync.topic<{ n: number }>(faultTopicOptions(1));
    const bridge = createNodeBridge<{ id: string; tenant: string }>({
      topics: [{ topic, authorize: (p, r) => r.tenantId !== undefined && r.tenantId === p.tenant }],
      authenticate: (token) => ({ id: token, tenant: token.slice(token.indexOf("@") + 1) }),
      sync,
      logger: () => undefined,
    });
    const server = await serveBridge(bridge, { port: 0, drainGraceMs: 100 });
    const subscribers: Awaited<ReturnType<typeof startSubscribers>> = [];
    try {
      const publisher = new Publisher(topic);
      await publisher.publish("warmup");
      const natsDir = join(dataDir, "nats");
      const pid = Number(readFileSync(join(natsDir, "nats-server.pid"), "utf8"));
      const tenants = ["a", "b", "c", "d"];
      subscribers.push(...(await startSubscribers(100, { urls: [`ws://127.0.0.1:${server.port}/ws`], topic: "fault.events", tenants })));

      const total = 200;
      const running = publisher.run(tenants, total, { concurrency: 2, pauseMs: 10 });
      await until("a third is acknowledged", () => publisher.ackedCount >= total / 3, 30_000);
      const downAt = Date.now();
      process.kill(pid, "SIGKILL");
      await until("nats-server is gone", () => !alive(pid), 10_000);
      // The Sync supervises its embedded server: a new one starts on the same port and store.
      const newPid = () => {
        try {
          return Number(readFileSync(join(natsDir, "nats-server.pid"), "utf8"));
        } catch {
          return pid;
        }
      };
      await until("a new nats-server runs", () => newPid() !== pid && alive(newPid()), 30_000);
      const ready = async () => (await fetch(`http://127.0.0.1:${server.port}/readyz`)).status;
      await until("/readyz is ready again", async () => (await ready()) === 200, 30_000);
      const readyMs = Date.now() - downAt;
      await running;
      const everyone = () => subscribers.every((s) => [...publisher.expected(s.options.tenantId)].every((id) => s.seen.has(id)));
      await until("every subscriber has every acknowledged event of its tenant", everyone, 30_000, 250);
      const deliveredAllMs = Date.now() - downAt;
      const counts = tally(subscribers, (s) => publisher.expected(s.options.tenantId));
      console.log(
        "FIGURES embedded-restart " +
          JSON.stringify({ subscribers: subscribers.length, published: publisher.published, acknowledged: publisher.ackedCount, publishRetries: publisher.retries, ...counts, readyMs, deliveredAllMs }),
      );
      expect(counts.delivered).toBe(subscribers.length * (total / tenants.length));
      expect(counts).toMatchObject({ lost: 0, doubled: 0, unexpected: 0, outOfOrder: 0, resets: 0 });
    } finally {
      for (const s of subscribers) s.close();
      await server.close();
      await sync.close();
    }
  }, 90_000);

  const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
  const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
  /** Runs `tidemark serve --data <dataDir>` to its exit; returns the exit code, output and duration. */
  function serveOnce(dataDir: string): Promise<{ code: number | null; output: string; ms: number }> {
    const started = Date.now();
    const child = spawn(process.execPath, ["--conditions=@tidemark/source", "--import", "tsx", cli, "serve", "--port", "0", "--data", dataDir], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += String(d)));
    child.stderr.on("data", (d) => (output += String(d)));
    const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    return new Promise((resolve) =>
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, output, ms: Date.now() - started });
      }),
    );
  }

  it("fault - a data directory that is a file: tidemark serve exits at once with one clear error line naming the path (no crash loop)", async () => {
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "x");
    const run = await serveOnce(file);
    console.log("FIGURES embedded-data-file " + JSON.stringify({ code: run.code, ms: run.ms }));
    expect(run.code).toBe(1);
    const lines = run.output.split("\n").filter((l) => l.includes('"level":"error"'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ENOTDIR|not a directory|EEXIST/);
    expect(lines[0]).toContain(file);
  });

  it("fault - a full disk under the embedded store: publishes fail in bounded time with a typed error and the process stays up", async () => {
    // A 4 MiB tmpfs where the test may mount one (root, as on the CI machine); elsewhere a
    // read-only data directory, which must fail the start with a clear error instead.
    const mnt = join(dir, "tiny");
    mkdirSync(mnt, { recursive: true });
    const mounted = await new Promise<boolean>((resolve) =>
      spawn("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt], { stdio: "ignore" }).on("exit", (c) => resolve(c === 0)).on("error", () => resolve(false)),
    );
    if (!mounted) chmodSync(mnt, 0o555);
    const sync = createSync({
      namespace: uniqueNamespace(),
      embedded: { dataDir: mounted ? mnt : join(mnt, "data"), websocket: false, maxFileStore: 64 * 1024 ** 2 },
      requestTimeoutMs: 2_000,
    });
    try {
      if (!mounted) {
        const err = await sync.ready().then(() => undefined, (e: unknown) => e);
        expect(String((err as Error)?.message)).toMatch(/EACCES|permission denied/i);
        return;
      }
      const topic = sync.topic<{ blob: string }>({ id: "fault.disk", retention: { maxBytes: 8 * 1024 ** 2 }, deadLetterRetention: { maxBytes: 1024 ** 2 } });
      const blob = "x".repeat(64 * 1024);
      let stored = 0;
      let failure: unknown;
      for (let i = 0; i < 200 && !failure; i++) {
        try {
          await topic.publish({ data: { blob } });
          stored++;
        } catch (err) {
          failure = err;
        }
      }
      // Later publishes fail too, each within a bound (no hang), and the process is still here.
      const started = Date.now();
      const again = await topic.publish({ data: { blob: "small" } }).then(() => undefined, (e: unknown) => e);
      const failMs = Date.now() - started;
      console.log(
        "FIGURES embedded-disk-full " +
          JSON.stringify({ stored, error: (failure as { code?: string })?.code, message: (failure as Error)?.message, failMs }),
      );
      expect(stored).toBeGreaterThan(0);
      expect(failure).toMatchObject({ code: ErrorCode.BrokerUnavailable });
      expect(again).toMatchObject({ code: ErrorCode.BrokerUnavailable });
      expect(failMs).toBeLessThan(15_000);
      // Cleanup: a nats-server on a full store is slow to stop; kill it rather than wait.
      process.kill(Number(readFileSync(join(mnt, "nats", "nats-server.pid"), "utf8")), "SIGKILL");
    } finally {
      await sync.close();
      if (mounted) await new Promise((r) => spawn("umount", ["-l", mnt]).on("exit", r));
    }
  });
});
