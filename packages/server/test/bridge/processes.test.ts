import { describe, it, expect, afterAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSync } from "../../src/index.js";
import { startTestNats, uniqueNamespace } from "@tidemark/testing";
import { TestClient } from "./client.js";

const bin = fileURLToPath(new URL("../../bin/tidemark.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tidemark-cli-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the exit code of a child. */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.on("exit", (code) => r(code))));
}

/** Starts `tidemark serve` as a child process; resolves with its URL once it logs "listening". */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string; output: string[] }> {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line: ${output.join("")}`)), 30_000);
    child.stderr!.on("data", (d) => output.push(String(d)));
    child.stdout!.on("data", (d: Buffer) => {
      output.push(String(d));
      for (const line of String(d).split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        resolve({ child, url: (JSON.parse(line) as { url: string }).url, output });
      }
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code}: ${output.join("")}`)));
  });
}

describe("bridge processes", () => {
  it("bridge - a client moves between two bridge processes on one NATS and resumes", async () => {
    await using nats = await startTestNats();
    const namespace = uniqueNamespace();
    const config = join(dir, "tidemark.config.mjs");
    writeFileSync(
      config,
      `export default {
        namespace: ${JSON.stringify(namespace)},
        topics: [{ id: "alerts", authorize: (user, { tenantId }) => tenantId !== undefined && tenantId === user.id }],
        authenticate: (token) => (token.startsWith("user-") ? { id: token.slice(5) } : null),
      };`,
    );
    const sync = createSync({ namespace, nats: { servers: nats.url } });
    try {
      const topic = sync.topic<number>({ id: "alerts" });
      const a = await serve(["--nats", nats.url, "--config", config]);
      const b = await serve(["--nats", nats.url, "--config", config]);
      const c1 = await TestClient.connect(`${a.url.replace("http", "ws")}/ws`, "user-t1");
      const s1 = await c1.subscribe({ id: "feed", topic: "alerts", tenantId: "t1" });
      await c1.next((f) => f.type === "caught_up");
      for (let i = 0; i < 5; i++) await topic.publish({ data: i, tenantId: "t1" });
      const seen = await c1.events(String(s1.hub), 5);
      const cursor = String((seen.at(-1)!.event as { cursor: string }).cursor);
      // bridge A shuts down (SIGTERM): the client is told to go elsewhere
      a.child.kill("SIGTERM");
      expect(await c1.next((f) => f.type === "drain")).toMatchObject({ type: "drain" });
      expect((await c1.closed).code).toBe(1001);
      for (let i = 5; i < 9; i++) await topic.publish({ data: i, tenantId: "t1" });
      const c2 = await TestClient.connect(`${b.url.replace("http", "ws")}/ws`, "user-t1");
      const s2 = await c2.subscribe({ id: "feed", topic: "alerts", tenantId: "t1", cursor });
      await c2.next((f) => f.type === "caught_up");
      await topic.publish({ data: 9, tenantId: "t1" });
      const resumed = await c2.events(String(s2.hub), 5);
      const all = [...seen, ...resumed].map((f) => (f.event as { data: number }).data);
      expect(all).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(await exited(a.child)).toBe(0);
      // the other tenant is not reachable with this token
      const denied = await c2.subscribe({ id: "x", topic: "alerts", tenantId: "t2" }).catch((e) => e.frame);
      expect(denied).toMatchObject({ code: "FORBIDDEN" });
      c2.close();
      b.child.kill("SIGTERM");
      expect(await exited(b.child)).toBe(0);
    } finally {
      await sync.close();
    }
  });

  it("cli - without --config it runs in dev mode on the embedded nats-server, loudly", async () => {
    const data = join(dir, "data");
    const dev = await serve(["--data", data]);
    expect(dev.output.join("")).toContain("DEV MODE");
    const receipt = await (await fetch(`${dev.url}/dev/publish?tenantId=x`, { method: "POST", body: JSON.stringify({ n: 1 }) })).json();
    expect(receipt).toMatchObject({ streamSequence: 1, duplicate: false });
    const client = await TestClient.connect(`${dev.url.replace("http", "ws")}/ws`, "anyone");
    const { hub } = await client.subscribe({ id: "d", topic: "demo.notifications", tenantId: "x", cursor: "s6t.nothing" });
    expect(await client.next((f) => f.type === "reset")).toMatchObject({ reason: "invalid_cursor" });
    await client.next((f) => f.type === "caught_up");
    await fetch(`${dev.url}/dev/publish?tenantId=x`, { method: "POST", body: JSON.stringify({ n: 2 }) });
    expect((await client.events(String(hub), 1))[0]!.event).toMatchObject({ data: { n: 2 } });
    dev.child.kill("SIGTERM");
    expect(await exited(dev.child)).toBe(0);
  });
});
